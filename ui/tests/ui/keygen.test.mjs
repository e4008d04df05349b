// Key generation left running: the dialog's progress bar fed by the module's progress (as
// lunasim reports an HSS tree's leaves) with the share and the time left, or the elapsed
// time alone; the dialog closed while the key is made (Escape or "Continue in background"),
// the header's indicator showing it and bringing it back; the end announced and the list
// refreshed; a failure in the background reported as a notification.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { calls, launch, login, openApp, shot } from "./helpers.mjs";

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/// Logged in, in Keys, the Generate dialog open on an HSS key; returns its suggested label.
async function openGenerate(page) {
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.getByTestId("key-table").waitFor();
  await page.getByTestId("generate-key").click();
  await page.getByTestId("preset").selectOption("hss");
  await page.getByTestId("spec-info").waitFor();
  return page.getByTestId("key-label").inputValue();
}

const valueNow = (page) =>
  page
    .getByTestId("keygen-progress")
    .getByRole("progressbar")
    .getAttribute("aria-valuenow")
    .then((v) => Number(v));

test("the module's progress moves the bar, with the share and the time left; closed, the header shows it; done, the list has the key", async () => {
  const page = await openApp(browser, { objects: 5, keygen: { steps: 6, stepMs: 250, progress: true, hold: true } });
  const label = await openGenerate(page);
  await page.getByTestId("generate-submit").click();
  const progress = page.getByTestId("keygen-progress");
  await progress.waitFor();
  await page.waitForFunction(
    () => Number(document.querySelector("[data-testid=keygen-progress] [role=progressbar]")?.getAttribute("aria-valuenow")) > 0,
  );
  const first = await valueNow(page);
  await page.waitForFunction(
    (v) => Number(document.querySelector("[data-testid=keygen-progress] [role=progressbar]")?.getAttribute("aria-valuenow")) > v,
    first,
  );
  assert.ok((await valueNow(page)) > first, "the bar moves");
  assert.equal(await progress.getByRole("progressbar").getAttribute("aria-valuemax"), "6144");
  const text = await progress.innerText();
  assert.match(text, /[\d,]+ \/ 6,144 \(\d+ %\) · \d+ s elapsed · about \d+ s left/);
  assert.equal(await page.getByTestId("generate-submit").isDisabled(), true);
  await shot(page, "60-keygen-progress");

  // Escape while the key is made closes to the background instead of doing nothing.
  await page.keyboard.press("Escape");
  await page.getByRole("dialog").waitFor({ state: "detached" });
  const indicator = page.getByTestId("keygen-indicator");
  await indicator.waitFor();
  assert.match(await indicator.innerText(), new RegExp(`Generating ${label}: \\d+ %`));
  // The officer works on meanwhile: the list answers.
  await page.getByTestId("key-row").first().click();
  await page.getByTestId("key-search").fill("release");
  await page.getByTestId("key-search").fill("");
  await shot(page, "61-keygen-indicator");
  const listed = (await calls(page, "list_keys")).length;

  await page.evaluate(() => window.__mock.releaseKeygen());
  await page
    .getByRole("status")
    .filter({ hasText: `Generated ${label}.` })
    .waitFor();
  await indicator.waitFor({ state: "detached" });
  await page.locator(`[data-testid=key-row][data-label="${label}"]`).first().waitFor();
  assert.ok((await calls(page, "list_keys")).length > listed, "the list was read again");
  assert.equal((await calls(page, "generate_key")).length, 1);
  assert.deepEqual(page.errors, []);
});

test("without the module's progress: the elapsed time; left running while in another view, brought back from the header", async () => {
  const page = await openApp(browser, { keygen: { steps: 2, stepMs: 100, hold: true } });
  const label = await openGenerate(page);
  await page.getByTestId("generate-submit").click();
  const progress = page.getByTestId("keygen-progress");
  await progress.getByText(/Generating on the HSM… [0-9.]+ s/).waitFor();
  assert.doesNotMatch(await progress.innerText(), /%/);
  await page.getByTestId("generate-background").click();
  await page.getByRole("dialog").waitFor({ state: "detached" });

  await page.keyboard.press("Alt+9");
  await page.locator("h1").filter({ hasText: "Audit trail" }).first().waitFor();
  const indicator = page.getByTestId("keygen-indicator");
  assert.match(await indicator.innerText(), new RegExp(`Generating ${label}: \\d+ s`));
  const before = await indicator.innerText();
  await page.waitForFunction((b) => document.querySelector("[data-testid=keygen-indicator]")?.textContent !== b, before);

  // Brought back: the same job, its form as it was started, and Escape sends it away again.
  await indicator.click();
  const dialog = page.getByRole("dialog");
  await dialog.getByText(/Generating on the HSM… [0-9.]+ s/).waitFor();
  assert.equal(await page.getByTestId("key-label").inputValue(), label);
  assert.equal(await page.getByTestId("preset").inputValue(), "hss");
  assert.equal(await page.getByTestId("key-label").isDisabled(), true);
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "detached" });
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "keygen-indicator", "focus returns");

  await page.evaluate(() => window.__mock.releaseKeygen());
  await page
    .getByRole("status")
    .filter({ hasText: `Generated ${label}.` })
    .waitFor();
  await indicator.waitFor({ state: "detached" });
  await page.keyboard.press("Alt+3");
  await page.locator(`[data-testid=key-row][data-label="${label}"]`).first().waitFor();
  assert.deepEqual(page.errors, []);
});

test("a generation that fails in the background says so in a notification; in the dialog, the error shows there", async () => {
  const page = await openApp(browser, { keygen: { hold: true, fail: true } });
  const label = await openGenerate(page);
  await page.getByTestId("generate-submit").click();
  await page.getByTestId("keygen-progress").waitFor();
  await page.getByTestId("generate-background").click();
  await page.getByTestId("keygen-indicator").waitFor();
  await page.evaluate(() => window.__mock.releaseKeygen());
  const alert = page.getByRole("alert").filter({ hasText: `No key ${label} was generated` });
  await alert.waitFor();
  assert.match(await alert.innerText(), /CKR_DEVICE_MEMORY/);
  await page.getByTestId("keygen-indicator").waitFor({ state: "detached" });

  // With the dialog open, the failure stays in it and the form can be used again.
  await page.getByTestId("generate-key").click();
  await page.getByTestId("generate-submit").click();
  await page.getByTestId("keygen-progress").waitFor();
  await page.evaluate(() => window.__mock.releaseKeygen());
  await page.getByRole("dialog").getByText("No key was generated").waitFor();
  assert.equal(await page.getByTestId("key-label").isDisabled(), false);
  assert.equal(
    await page
      .getByRole("alert")
      .filter({ hasText: `No key ${label} was generated` })
      .count(),
    1,
    "no second notification",
  );
  await page.keyboard.press("Escape");
  await page.getByRole("dialog").waitFor({ state: "detached" });
  assert.equal(await page.getByTestId("keygen-indicator").count(), 0);
  assert.deepEqual(page.errors, []);
});

test("an HSS level in SHA-256/192 lists its own LM-OTS types, keeps w across a change of hash, and is what the request carries", async () => {
  const page = await openApp(browser, { objects: 5, keygen: { steps: 1, stepMs: 10 } });
  await openGenerate(page);
  const lms = page.getByLabel("Level 1 LMS type");
  const ots = page.getByLabel("Level 1 LM-OTS type");
  assert.ok((await lms.locator("option").allTextContents()).includes("LMS_SHA256_M24_H10"));
  await lms.selectOption("LMS_SHA256_M24_H5");
  assert.equal(await ots.inputValue(), "LMOTS_SHA256_N24_W8", "w = 8 carried over to N24");
  assert.deepEqual(await ots.locator("option").allTextContents(), [
    "LMOTS_SHA256_N24_W1",
    "LMOTS_SHA256_N24_W2",
    "LMOTS_SHA256_N24_W4",
    "LMOTS_SHA256_N24_W8",
  ]);
  await ots.selectOption("LMOTS_SHA256_N24_W4");
  await page.getByTestId("spec-info").getByText("52 bytes (checked after generation)").waitFor();
  assert.match(await page.getByTestId("hss-capacity").innerText(), /1,024/);
  // Level 2 stays SHA-256: levels may differ.
  assert.equal(await page.getByLabel("Level 2 LM-OTS type").inputValue(), "LMOTS_SHA256_N32_W8");
  await shot(page, "61-generate-hss-sha256-192");
  await page.getByTestId("generate-submit").click();
  await page.getByRole("dialog").waitFor({ state: "detached" });
  const req = (await calls(page, "generate_key"))[0].args.request;
  assert.deepEqual(req.spec, {
    kind: "hss",
    params: {
      levels: [
        ["LMS_SHA256_M24_H5", "LMOTS_SHA256_N24_W4"],
        ["LMS_SHA256_M32_H5", "LMOTS_SHA256_N32_W8"],
      ],
    },
  });
  // Back to SHA-256: the LM-OTS type follows with its w.
  await page.getByTestId("generate-key").click();
  await page.getByTestId("preset").selectOption("hss");
  await lms.selectOption("LMS_SHA256_M24_H10");
  await ots.selectOption("LMOTS_SHA256_N24_W2");
  await lms.selectOption("LMS_SHA256_M32_H10");
  assert.equal(await ots.inputValue(), "LMOTS_SHA256_N32_W2");
  assert.deepEqual(page.errors, []);
});
