// Accessibility: axe-core (the engine browsers' accessibility checkers use) run on every
// view of the sidebar — read from src/nav.tsx, so a new view is covered without a change
// here — in the light and the dark theme and in each language, first as a new user sees the
// window (not logged in, the login dialog open), then logged in with keys and an audit trail
// (the keys table, a key's details, the Generate key dialog, an audit record's details). Any violation of critical, serious or moderate impact
// fails, listed with its rule, impact, the elements (selectors) and where it was seen.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { launch, openApp } from "./helpers.mjs";

const ui = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const AXE = readFileSync(join(createRequire(import.meta.url).resolve("axe-core"), "../axe.min.js"), "utf8");
/// The views in the sidebar's order, as src/nav.tsx registers them.
const VIEWS = [...readFileSync(join(ui, "src/nav.tsx"), "utf8").matchAll(/\{\s*view:\s*"([\w-]+)"/g)].map((m) => m[1]);
const LANGS = ["en", "zh-Hant", "zh-Hans"];
const THEMES = ["light", "dark"];
const FAIL = new Set(["critical", "serious", "moderate"]);

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/// Violations seen so far: "rule (impact): selector" → the places it was seen.
function collector() {
  const seen = new Map();
  return {
    add(where, violations) {
      for (const v of violations) {
        if (!FAIL.has(v.impact)) continue;
        for (const n of v.nodes) {
          const k = `${v.id} (${v.impact}): ${n.target.map((t) => (Array.isArray(t) ? t.join(" >>> ") : t)).join(" ")}`;
          if (!seen.has(k)) seen.set(k, []);
          seen.get(k).push(where);
        }
      }
    },
    report() {
      return [...seen].map(
        ([k, places]) =>
          `${k} — in ${places.length > 4 ? `${places.slice(0, 4).join(", ")} and ${places.length - 4} more` : places.join(", ")}`,
      );
    },
  };
}

/// The page once it has settled: no pending frame, the mock's answers rendered.
async function settle(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 100)))));
}

async function axe(page, where, found) {
  await settle(page);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
  found.add(where, violations);
}

/// Show view number `i` of the sidebar and wait for its heading.
async function show(page, i) {
  await page.locator("nav.sidebar li button").nth(i).click();
  await page.locator(`nav.sidebar li:nth-child(${i + 1}) button[aria-current=page]`).waitFor();
  await page.locator("main h1").first().waitFor();
}

/// The window's language, chosen in Settings as a person would (no reload).
async function language(page, lang) {
  await show(page, VIEWS.indexOf("settings"));
  await page.getByTestId("language").selectOption(lang);
  await page.getByTestId("settings-save").click();
  await page.waitForFunction((l) => document.documentElement.lang === l, lang);
}

test("the sidebar shows every view nav.tsx registers", async () => {
  const page = await openApp(browser);
  assert.ok(VIEWS.length >= 12, `views read from nav.tsx: ${VIEWS}`);
  assert.equal(await page.locator("nav.sidebar li button").count(), VIEWS.length);
});

test("as a new user: every view and the login dialog, light and dark, in each language, without an accessibility violation", async () => {
  const page = await openApp(browser);
  await page.evaluate(AXE);
  const found = collector();
  for (const lang of LANGS) {
    await language(page, lang);
    for (const theme of THEMES) {
      await page.emulateMedia({ colorScheme: theme });
      for (const [i, view] of VIEWS.entries()) {
        await show(page, i);
        await axe(page, `${view}/${theme}/${lang}`, found);
      }
      await show(page, VIEWS.indexOf("connections"));
      await page.getByTestId("login-button").click();
      await page.getByRole("dialog").waitFor();
      await axe(page, `login dialog/${theme}/${lang}`, found);
      await page.keyboard.press("Escape");
      await page.getByRole("dialog").waitFor({ state: "detached" });
    }
  }
  assert.deepEqual(found.report(), []);
  assert.deepEqual(page.errors, []);
});

test("logged in: every view, a key's details, the Generate key dialog and an audit record, light and dark, in each language, without an accessibility violation", async () => {
  const page = await openApp(browser, { objects: 5, records: 300 });
  await page.evaluate(AXE);
  await show(page, VIEWS.indexOf("connections"));
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByTestId("current-role").waitFor();
  const found = collector();
  for (const lang of LANGS) {
    await language(page, lang);
    for (const theme of THEMES) {
      await page.emulateMedia({ colorScheme: theme });
      for (const [i, view] of VIEWS.entries()) {
        await show(page, i);
        await axe(page, `${view}/${theme}/${lang}`, found);
      }
      await show(page, VIEWS.indexOf("keys"));
      await page.getByTestId("key-row").first().click();
      await page.locator("main h3, main h2").first().waitFor();
      await axe(page, `keys with a key's details/${theme}/${lang}`, found);
      await page.getByTestId("generate-key").click();
      await page.getByRole("dialog").waitFor();
      await axe(page, `Generate key dialog/${theme}/${lang}`, found);
      await page.keyboard.press("Escape");
      await page.getByRole("dialog").waitFor({ state: "detached" });
      await show(page, VIEWS.indexOf("audit"));
      await page.getByTestId("audit-row").first().click();
      await page.getByTestId("record-detail").waitFor();
      await axe(page, `audit with a record's details/${theme}/${lang}`, found);
    }
  }
  assert.deepEqual(found.report(), []);
  assert.deepEqual(page.errors, []);
});
