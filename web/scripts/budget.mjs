// Fails the build when the JavaScript a first visit downloads (the scripts and
// module preloads index.html names) exceeds the budget, gzipped.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const BUDGET = 300 * 1024;
const publicDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../public");
const html = readFileSync(path.join(publicDir, "index.html"), "utf8");
const files = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
if (files.length === 0) throw new Error("no scripts found in public/index.html");
let total = 0;
for (const f of files) total += gzipSync(readFileSync(path.join(publicDir, f)), { level: 9 }).length;
const kb = (n) => (n / 1024).toFixed(1) + " KB";
console.log(`first-load JavaScript: ${kb(total)} gzipped in ${files.length} file(s) (budget ${kb(BUDGET)})`);
if (total > BUDGET) process.exit(1);
