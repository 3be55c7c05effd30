#!/bin/sh
# Which Python `make env` makes .venv from, for the Makefile: prints "<executable> <version>"
# of the first supported one of
#   $REQUESTED (`make ... PYTHON=`: that one, or none), else the interpreter .venv was made
#   from (so that a venv made with PYTHON= stays in use), else `python3`, else the newest
#   `python3.N` on PATH;
# or, when none is supported, says in one line on stderr which versions work and how to get
# one, and exits 1. The supported minor versions are its arguments after the venv's folder
# (the Makefile reads them from pyproject.toml's classifiers: one list).
# Plain sh, and each candidate asked in code every Python runs, 2.7 included: it runs before
# any environment exists, on whatever Python the machine has.
#   usage: REQUESTED=<python or empty> find_python.sh <venv folder> 3.10 3.11 ...
venv=$1
shift
supported="$*"

identify() {  # "<executable> <major.minor.micro>", or nothing when $1 does not run
    "$1" -c 'import sys; print("%s %d.%d.%d" % ((sys.executable,) + tuple(sys.version_info[:3])))' 2>/dev/null
}
is_supported() {  # $1: "<executable> <version>"
    minor=${1##* }
    minor=${minor%.*}
    for version in $supported; do [ "$version" = "$minor" ] && return 0; done
    return 1
}

recorded=$(cut -d' ' -f1 "$venv/.interpreter" 2>/dev/null)
newest_first=$(for version in $supported; do echo "python$version"; done | sort -t. -k2,2nr | tr '\n' ' ')
candidates=${REQUESTED:-"$recorded python3 $newest_first"}

for candidate in $candidates; do
    found=$(identify "$candidate")
    [ -n "$found" ] && is_supported "$found" && { echo "$found"; exit 0; }
done

# None: say what was there, which versions work, and how to get one, in one line.
list=$(echo "$supported" | sed 's/ /, /g; s/, \([^,]*\)$/ or \1/')
newest=${newest_first%% *}
newest=${newest#python}
shown=${REQUESTED:-python3}
found=$(identify "$shown")
if [ -n "$found" ]; then what="${REQUESTED:+PYTHON=}$shown is Python ${found##* }"
elif [ -n "$REQUESTED" ]; then what="PYTHON=$REQUESTED does not run"
else what="there is no python3 on PATH"; fi
echo "make: the book builds with Python $list, and $what: install one (pyenv install $newest, uv python install $newest, or your system's python$newest package) and name it: make book PYTHON=python$newest" >&2
exit 1
