// One submission's Python, inside the sandbox (ours): Node, Pyodide, the student's cells.
//
//   node --experimental-permission --allow-fs-read=<box>/ ... child.mjs <box>/ < job.json
//
// runnable_book/grade/sandbox.py starts it (in namespaces, as nobody, under Node's permission model:
// docs/grading.md, says which and why) with the job on stdin's first line: the grader's
// chapter_lib, the cells to run and the checks to drive. It answers on stdout, one JSON line
// per event, each carrying the job's nonce:
//   {type: "ready"}                       Python started, the grader's chapter_lib imported
//   {type: "load", step}                  packages being loaded for step's cell
//   {type: "begin", step}                 the step started (its time limit starts now)
//   {type: "serving", step, reply}        a calls step is ready for calls (or says why not)
//   {type: "answers", step, answers}      what came of the calls the grader sent (a stdin line
//                                         {calls: [...]}; {done: true} ends the step)
//   {type: "end", step, result}           the step ended; result: harness.py's JSON, as text
//   {type: "done"}
// The parent trusts none of it for a verdict (the student's code shares this process and can
// write here too): it takes from it only which step is running, for the time limits, and the
// record of the student's answers, which the judge replays outside.
import { readFileSync, constants as fsConstants } from "node:fs";
import { gunzipSync } from "node:zlib";

const box = process.argv[2];
// Pyodide's NODEFS reads the file-open flags from process.binding("constants"), which the
// permission model refuses; it gets those constants and nothing else.
const binding = process.binding;
process.binding = (name) => (name === "constants" ? { fs: fsConstants } : binding.call(process, name));

// stdin, line by line: the job, then the grader's calls for each calls step.
process.stdin.setEncoding("utf8");
const stdinLines = (async function* () {
  let buffer = "";
  for await (const chunk of process.stdin) {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      yield buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
    }
  }
  if (buffer) yield buffer;
})();
const nextLine = async () => {
  const { value, done } = await stdinLines.next();
  return done ? null : value;
};

const job = JSON.parse(await nextLine());
const send = (message) => new Promise((resolve) =>
  process.stdout.write(JSON.stringify({ nonce: job.nonce, ...message }) + "\n", resolve));

const { loadPyodide } = await import(`${box}pyodide/pyodide.mjs`);
const discard = () => {}; // (the harness captures Python's output itself; nothing reaches stdout)
const noInput = () => null; // Python's stdin is empty: the grader's lines are for this script alone
let snapshot;
try {
  snapshot = gunzipSync(readFileSync(`${box}python-snapshot.bin.gz`));
} catch {
  snapshot = undefined; // no snapshot: Python starts afresh (slower)
}
let pyodide;
try {
  pyodide = await loadPyodide({ indexURL: `${box}pyodide/`, _loadSnapshot: snapshot, stdout: discard, stderr: discard, stdin: noInput });
} catch {
  pyodide = await loadPyodide({ indexURL: `${box}pyodide/`, stdout: discard, stderr: discard, stdin: noInput });
}
pyodide.FS.mkdirTree("/grader/code");
for (const name of ["wire.py", "call_forms.py", "harness.py"]) {
  pyodide.FS.writeFile(`/grader/code/${name}`, readFileSync(`${box}code/${name}`, "utf8"));
}
pyodide.runPython("import sys; sys.path.insert(0, '/grader/code')");
const harness = pyodide.pyimport("harness");
harness.use_library(JSON.stringify(job.library));
await send({ type: "ready" });

let figuresUnpacked = false;
async function loadPackages(names) {
  await pyodide.loadPackage(names, { messageCallback: () => {}, errorCallback: () => {} });
  if (names.includes("matplotlib") && !figuresUnpacked) {
    figuresUnpacked = true;
    // The first figure's bytecode and matplotlib's font cache, as the page unpacks them.
    try {
      const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
      pyodide.unpackArchive(new Uint8Array(readFileSync(`${box}first-figure.zip`)), "zip", { extractDir: sitePackages });
    } catch {
      // without it matplotlib builds its font cache itself
    }
  }
  harness.mark_loaded(pyodide.toPy(names));
}

for (const step of job.steps) {
  if (step.kind === "cell") {
    const wanted = harness.packages_for(step.source).toJs();
    if (wanted.length) {
      await send({ type: "load", step: step.index });
      try {
        await loadPackages(wanted);
      } catch {
        // the cell's import then fails in the cell, as a missing module
      }
    }
    await send({ type: "begin", step: step.index });
    const result = await harness.run_cell(step.source, step.filename); // (JSON, read by the parent)
    await send({ type: "end", step: step.index, result });
  } else if (step.kind === "check") {
    await send({ type: "begin", step: step.index });
    const result = harness.run_check(JSON.stringify(step));
    await send({ type: "end", step: step.index, result });
  } else if (step.kind === "calls") {
    await send({ type: "begin", step: step.index });
    await send({ type: "serving", step: step.index, reply: harness.start_calls(JSON.stringify(step)) });
    for (let line = await nextLine(); line !== null; line = await nextLine()) {
      const request = JSON.parse(line);
      if (!request.calls) break;
      const answers = JSON.parse(harness.make_calls(JSON.stringify(request.calls)));
      await send({ type: "answers", step: step.index, answers });
    }
    await send({ type: "end", step: step.index, result: harness.finish_calls() });
  }
}
await send({ type: "done" });
process.exit(0);
