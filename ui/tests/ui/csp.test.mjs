// The window's Content-Security-Policy (tauri.conf.json, served with the page under /csp/):
// the console itself runs without a single violation, and what an injected script would
// need — inline script, eval, remote fetches, remote images, frames, form posts — is blocked.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { launch, login, openApp } from "./helpers.mjs";

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const violations = (page) => page.evaluate(() => window.__csp);

test("the console works under its CSP without a single violation", async () => {
  const page = await openApp(browser, { objects: 3, records: 20 }, { path: "csp/" });
  await login(page);
  await page.getByText("user logged in").waitFor();
  for (const key of ["2", "3", "4", "5", "6", "7", "8", "9", "0", "1"]) {
    await page.keyboard.press(`Alt+${key}`);
    await page.waitForTimeout(150);
  }
  assert.deepEqual(await violations(page), []);
  assert.deepEqual(page.errors, []);
});

test("inline script, eval, remote fetches, images, frames and form posts are blocked", async () => {
  const page = await openApp(browser, {}, { path: "csp/" });
  const other = process.env.UI_BASE_URL.replace("127.0.0.1", "localhost"); // another origin
  const r = await page.evaluate(async (other) => {
    const out = {};
    const s = document.createElement("script");
    s.textContent = "window.__inlineRan = true";
    document.body.appendChild(s);
    out.inlineRan = window.__inlineRan === true;
    // A string evaluated later (not on DevTools' own call stack, which CSP exempts).
    setTimeout("window.__evalRan = true", 0);
    try {
      await fetch(`${other}index.html`);
      out.fetched = true;
    } catch {
      out.fetched = false;
    }
    const img = document.createElement("img");
    img.src = `${other}icon.svg`;
    document.body.appendChild(img);
    const frame = document.createElement("iframe");
    frame.src = `${other}index.html`;
    document.body.appendChild(frame);
    const ext = document.createElement("script");
    ext.src = `${other}assets/x.js`;
    document.body.appendChild(ext);
    const form = document.createElement("form");
    form.method = "post";
    form.action = `${other}collect`;
    document.body.appendChild(form);
    form.submit();
    await new Promise((res) => setTimeout(res, 500));
    out.evalRan = window.__evalRan === true;
    return out;
  }, other);
  assert.equal(r.inlineRan, false, "inline script ran");
  assert.equal(r.evalRan, false, "eval ran");
  assert.equal(r.fetched, false, "a remote fetch went through");
  assert.match(page.url(), /\/csp\/$/, "the form post navigated away");
  const seen = new Set((await violations(page)).map((v) => v.directive));
  for (const d of ["script-src-elem", "script-src", "connect-src", "img-src", "frame-src", "form-action"]) {
    // script-src: the string timer; script-src-elem: the inline and the remote script.
    assert.ok(seen.has(d), `no ${d} violation in ${[...seen].join(", ")}`);
  }
});
