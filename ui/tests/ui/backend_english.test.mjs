// Issue 42: the texts the backend computes read in 繁體中文 — the HSS key-generation warning,
// a drift check's objects and field names, the audit finding's kind, a signing error whose
// reason is the system's English (nested, framed in the officer's language), a signing
// certificate's warnings, why a file is not a wrap file, and why a drift check could not read
// a member. Each was English in a Chinese window before: the backend sent only its English
// string.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { launch, openApp, shot } from "./helpers.mjs";

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

async function loginZh(page) {
  await page.keyboard.press("Alt+1");
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByText("使用者已登入").first().waitFor();
}

test("why a drift check could not read a member reads in 繁體中文", async () => {
  const page = await openApp(browser, { ha: "member_unreadable" }, { locale: "zh-TW" });
  await loginZh(page);
  await page.keyboard.press("Alt+2");
  await page.getByTestId("drift-check").click();
  const row = page.getByTestId("drift-member").nth(1);
  await row.waitFor();
  const text = await row.innerText();
  assert.match(text, /HSM 拒絕了此操作：C_FindObjectsInit 回傳 CKR_FUNCTION_FAILED。/);
  assert.doesNotMatch(text, /The HSM refused/);
  assert.deepEqual(page.errors, []);
});

test("the HSS key-generation warning reads in 繁體中文", async () => {
  const page = await openApp(browser, {}, { locale: "zh-TW" });
  await loginZh(page);
  await page.keyboard.press("Alt+3");
  await page.getByTestId("generate-key").click();
  await page.getByTestId("preset").selectOption("hss");
  await page.getByTestId("hss-capacity").waitFor();
  await page.getByRole("dialog").locator("select").filter({ hasText: "LMS_SHA256_M32_H15" }).first().selectOption("LMS_SHA256_M32_H15");
  const w = page.getByTestId("keygen-warning");
  await w.waitFor();
  const text = await w.innerText();
  assert.match(text, /在 Luna HSM 上產生 H15 樹的金鑰約需 90 秒/);
  assert.doesNotMatch(text, /Key generation|takes about/);
  assert.deepEqual(page.errors, []);
});

test("a drift check's objects, field names and values read in 繁體中文", async () => {
  const page = await openApp(browser, { ha: "drift" }, { locale: "zh-TW" });
  await loginZh(page);
  await page.keyboard.press("Alt+2");
  await page.getByTestId("drift-check").click();
  const diffs = page.getByTestId("drift-difference");
  await diffs.nth(1).waitFor();
  const missing = await diffs.nth(0).innerText();
  assert.match(missing, /私密金鑰「fw_sign_2026_11」（ID 0a0b）/);
  assert.match(missing, /存在/);
  assert.doesNotMatch(missing, /private key|present/);
  const differs = await diffs.nth(1).innerText();
  assert.match(differs, /秘密金鑰「wrap」（ID 07）/);
  assert.match(differs, /標籤 不同/);
  assert.doesNotMatch(differs, /secret key|label/);
  await shot(page, "42-drift-zh-Hant");
  assert.deepEqual(page.errors, []);
});

test("a broken trail's finding kind reads in 繁體中文, its code beside it", async () => {
  const page = await openApp(browser, { records: 300, tamperedSeq: 150, tamperKind: "truncated_tail" }, { locale: "zh-TW" });
  await loginZh(page);
  await page.keyboard.press("Alt+9");
  await page.getByTestId("verify-trail").click();
  const v = page.getByTestId("verdict");
  await v.waitFor();
  assert.match(await v.innerText(), /發現：最新記錄遭移除（truncated_tail）；/);
  assert.deepEqual(page.errors, []);
});

test("a signature that cannot be written, and the certificate's warnings, read in 繁體中文", async () => {
  const page = await openApp(browser, { pqc: true, certificateExpired: true }, { locale: "zh-TW" });
  await loginZh(page);
  await page.evaluate(() => window.__mock.drop(["/srv/release/readonly.bin"]));
  await page.getByTestId("sign-files").waitFor();
  // test_p256 has its certificate on the token (the mock's codesign_2026).
  await page.getByTestId("sign-key").selectOption({ label: "test_p256 — ECDSA P-256" });
  // The key's certificate expired: said before signing, in the officer's language.
  const warnings = page.getByTestId("certificate-warnings");
  await warnings.waitFor();
  const w = await warnings.innerText();
  assert.match(w, /簽章憑證（CN=[^）]+）已於 2026-11-01T00:00:00Z 到期。/);
  assert.doesNotMatch(w, /the signing certificate|expired on/);
  await page.getByTestId("sign-submit").click();
  await page.getByTestId("sign-report").waitFor();
  const row = page.locator("[data-testid=sign-file][data-state=failed]");
  await row.waitFor();
  // The system's own words stay, inside a sentence of the officer's language.
  assert.match(
    await row.innerText(),
    /無法寫入 \/srv\/release\/readonly\.bin\.sig：作業系統回報寫入錯誤（Permission denied \(os error 13\)）。/,
  );
  await shot(page, "42-sign-zh-Hant");
  assert.deepEqual(page.errors, []);
});

test("why a file is not a wrap file reads in 繁體中文", async () => {
  const page = await openApp(browser, { objects: 3 }, { locale: "zh-TW" });
  await loginZh(page);
  await page.keyboard.press("Alt+3");
  await page.getByTestId("unwrap-key").click();
  await page.getByTestId("unwrap-path").fill("/tmp/release.txt");
  await page.getByTestId("unwrap-with").selectOption({ index: 1 });
  await page.getByTestId("unwrap-run").click();
  await page.getByText("/tmp/release.txt：不是包裝金鑰檔案：不是有效的 JSON（expected value at line 1 column 1）").waitFor();
  assert.deepEqual(page.errors, []);
});
