// UI tests: the production build (dist/) in Debian's Chromium, with the IPC answered by
// the typed mock backend (tests/mock/backend.ts). Serves dist/, then runs tests/ui/*.test.mjs
// with node's test runner. Screenshots go to ../tests/artifacts/ui/.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "vite";

const ui = resolve(fileURLToPath(new URL("..", import.meta.url)));
const dist = join(ui, "dist");
if (!existsSync(join(dist, "index.html"))) {
  console.error("ui/dist is missing: run `npm run build` first");
  process.exit(1);
}
await build({ configFile: join(ui, "vite.mock.config.ts"), logLevel: "warn", root: ui });

// The window's Content-Security-Policy exactly as tauri.conf.json declares it; pages under
// /csp/ are served with it (tests/ui/csp.test.mjs).
const csp = Object.entries(JSON.parse(readFileSync(join(ui, "../tauri.conf.json"), "utf8")).app.security.csp)
  .map(([k, v]) => `${k} ${v}`)
  .join("; ");
const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png" };
const server = createServer((req, res) => {
  let path = normalize(decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname)).replace(/^(\.\.[/\\])+/, "");
  const withCsp = path.startsWith("/csp/");
  if (withCsp) path = path.slice(4);
  const file = join(dist, path === "/" ? "index.html" : path);
  if (!file.startsWith(dist) || !existsSync(file)) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, {
    "content-type": types[extname(file)] ?? "application/octet-stream",
    ...(withCsp ? { "content-security-policy": csp } : {}),
  });
  res.end(readFileSync(file));
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const { port } = server.address();

const files = readdirSync(join(ui, "tests/ui"))
  .filter((f) => f.endsWith(process.env.UI_ONLY ?? ".test.mjs"))
  .map((f) => join(ui, "tests/ui", f));
// Asynchronously: this process keeps serving the files while the tests run.
const child = spawn(process.execPath, ["--test", `--test-concurrency=${process.env.UI_TEST_JOBS ?? 2}`, ...files], {
  stdio: "inherit",
  env: { ...process.env, UI_BASE_URL: `http://127.0.0.1:${port}/`, UI_MOCK_JS: join(ui, "dist-mock/mock.js") },
});
const code = await new Promise((r) => child.on("exit", (c) => r(c ?? 1)));
server.close();
process.exit(code);
