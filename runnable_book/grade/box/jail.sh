#!/bin/sh
# The sandbox's filesystem and identity (ours): run by runnable_book/grade/sandbox.py as the first
# process of fresh namespaces (`unshare --net --mount --pid --ipc --uts --fork --kill-child`,
# plus `--user --map-root-user` where the grader is not root). It builds a root on a tmpfs
# holding only the system's programs and libraries and the box (what the sandbox runs), all
# read-only, enters it (chroot), gives up every capability (and, as root, root itself: the
# user nobody) and the grader's environment, then runs Node.
#
#   jail.sh <drop-to-nobody: 1|0> <folder to show as /box> -- <node and its arguments>
#
# Nothing the grader owns (the repository, the submissions, _build/grades, home folders) is
# in that root, and nothing in it is writable. The tmpfs disappears with the namespace.
# docs/grading.md, has the threat model.
set -eu
# JAIL_TOOLS: where the grader found setpriv and chroot (runnable_book/grade/isolation.py).
PATH="${JAIL_TOOLS:+$JAIL_TOOLS:}$PATH:/usr/sbin:/sbin:/usr/bin:/bin"
drop="$1"
source="$2"
shift 3

mount --make-rprivate /
# Everything below lives in a tmpfs mounted (in this namespace only) over an existing folder
# that does not hold the box: on the host, nothing is created and nothing is left.
source=$(readlink -f "$source")
base=
for candidate in /tmp /mnt /media /var/tmp /srv /opt; do
  case "$source/" in "$candidate"/*) continue ;; esac
  if [ -d "$candidate" ]; then base=$candidate; break; fi
done
[ -n "$base" ] || { echo "jail.sh: no folder to mount the sandbox's root on" >&2; exit 70; }
mount -t tmpfs -o size=1m,mode=0755 grade-jail "$base"
root=$base/root
mkdir -p "$root"
for dir in usr bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$dir" ]; then
    ln -s "$(readlink "/$dir")" "$root/$dir"
  elif [ -d "/$dir" ]; then
    mkdir "$root/$dir"
    mount --rbind "/$dir" "$root/$dir"
    mount -o remount,bind,ro "$root/$dir"
  fi
done
# Node's installation when it lives outside /usr (nvm, /opt): that folder too, read-only.
node_home=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
case "$node_home" in
  /usr | /usr/*) ;;
  *) mkdir -p "$root$node_home"
     mount --rbind "$node_home" "$root$node_home"
     mount -o remount,bind,ro "$root$node_home" ;;
esac
mkdir -p "$root/etc" "$root/dev" "$root/proc" "$root/tmp"
[ -f /etc/ld.so.cache ] && cp /etc/ld.so.cache "$root/etc/"
for device in null zero random urandom; do
  touch "$root/dev/$device"
  mount --bind "/dev/$device" "$root/dev/$device"
done
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
# What the sandbox runs (Pyodide, Python's snapshot, the figure cache, child.mjs and the
# harness): the folder sandbox.py prepared in _build/grades, read-only.
mkdir "$root/box"
mount --bind "$source" "$root/box"
mount -o remount,bind,ro "$root/box"
mount -o remount,bind,ro "$base"

cd "$root"
# setpriv runs inside the new root, where the system's folders are those of the host.
setpriv=$(command -v setpriv)
clean_env="/usr/bin/env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME=/nonexistent"
if [ "$drop" = 1 ]; then
  exec chroot "$root" "$setpriv" --reuid=65534 --regid=65534 --clear-groups \
    --no-new-privs --inh-caps=-all --bounding-set=-all -- $clean_env "$@"
fi
exec chroot "$root" "$setpriv" --no-new-privs --inh-caps=-all --bounding-set=-all -- $clean_env "$@"
