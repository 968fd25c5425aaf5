// A node:test reporter that writes how long each test file's tests took, slowest first: where the suite's time
// goes. scripts/test.sh adds it when MILLRACE_TEST_TIMES names a file. A file's figure is the sum of its top-level
// tests and suites (they run one after another inside the file; files run three at a time).
export default async function* fileTimes(source) {
  const perFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
      const file = event.data.file ?? '(unknown file)';
      perFile.set(file, (perFile.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0));
    }
  }
  const root = `${process.cwd()}/`;
  for (const [file, ms] of [...perFile].sort((a, b) => b[1] - a[1])) {
    yield `${(ms / 1000).toFixed(1).padStart(7)} s  ${file.startsWith(root) ? file.slice(root.length) : file}\n`;
  }
}
