// Open the built UI in Chromium with the mock backend installed before the app runs.
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const artifacts = resolve(fileURLToPath(new URL("../../../tests/artifacts/ui", import.meta.url)));
mkdirSync(artifacts, { recursive: true });

// Debian's chromium-headless-shell: the same Chromium (Blink, V8, the same version as the
// browser package) built for automation, without the browser's own UI. The full browser in
// headless mode spent about twice the CPU on these tests (540 against 282 CPU seconds, on two
// cores). CHROMIUM_PATH=/usr/bin/chromium runs them in the full browser.
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium-headless-shell";

export async function launch() {
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
}

/** A page on the app with the mock configured by `config` (see tests/mock/backend.ts). */
/// `view`: the view the window remembers from a previous run (it opens there).
export async function openApp(
  browser,
  config = {},
  { colorScheme = "light", storage = null, path = "", locale = "en-US", view = null } = {},
) {
  const context = await browser.newContext({ viewport: { width: 1360, height: 860 }, colorScheme, timezoneId: "UTC", locale });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.stack ?? e.message));
  const mock = readFileSync(process.env.UI_MOCK_JS, "utf8");
  await page.addInitScript({
    content: `window.__MOCK_CONFIG__ = ${JSON.stringify(config)};\n${storage ? `localStorage.clear();` : ""}\n${view ? `localStorage.setItem("hsmc.view", ${JSON.stringify(view)});` : ""}\n${mock}`,
  });
  // Content-Security-Policy violations, for the CSP tests (pages under /csp/).
  await page.addInitScript({
    content: `window.__csp = []; document.addEventListener("securitypolicyviolation", (e) => window.__csp.push({ directive: e.effectiveDirective, blocked: e.blockedURI }));`,
  });
  await page.goto(process.env.UI_BASE_URL + path);
  await page.waitForSelector(".app, .startup-error");
  page.errors = errors;
  return page;
}

export async function shot(page, name) {
  await page.screenshot({ path: join(artifacts, `${name}.png`) });
}

export async function calls(page, cmd) {
  return page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c), cmd);
}

export async function login(page, pin = "12345678") {
  await page.getByRole("button", { name: "Connections" }).click();
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill(pin);
  await page.getByTestId("login-submit").click();
}
