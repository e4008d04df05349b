// The views that came to the catalogs last (HA groups, usage limits, a key's OpenPGP and
// minisign exports) in 简体中文: their chrome — headings, table headers, badges, buttons,
// hints — holds no English word, nor do the texts the backend computes (drift summaries,
// the KCV method, the probe's basis: keyed texts the UI translates); what stays English is
// object names, the labels and serials of the mock's data, and the names that are the same
// in every language (CKA_ID, CA_GetHAState).
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

/// The mock's data, removed before looking for English words (a drift difference's object
/// and field names are keyed texts now, so they are not exempt).
const BACKEND = ["wrap-old", "wrap", "prod-ha", "limited_ecdsa_2026_11", "Built-in lunasim", "ECDSA P-256"];
/// Names written the same in every language.
const NAMES = new Set(["GetHAState", "GetHSMStats", "HAOnly", "OpenPGP", "minisign", "pub", "id", "label", "Luna"]);

/// The English words left in `text` once the backend's texts and the names are taken out.
function english(text) {
  let s = text;
  for (const b of BACKEND) s = s.split(b).join(" ");
  // Serials, key IDs, counts: anything with a digit in it.
  s = s.replace(/[\w-]*\d[\w-]*/g, " ");
  return (s.match(/[A-Za-z][A-Za-z'’]*/g) ?? []).filter((w) => /[a-z]/.test(w) && !NAMES.has(w));
}

async function noEnglish(locator, what) {
  await locator.waitFor();
  const text = await locator.innerText();
  assert.deepEqual(english(text), [], `${what}: ${text}`);
  return text;
}

test("HA groups, usage limits and the OpenPGP section in 简体中文: no English in their chrome", async () => {
  const page = await openApp(browser, { ha: "drift", usageLimit: 5, ed25519Key: true }, { locale: "zh-CN" });
  await page.keyboard.press("Alt+1");
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByText("用户已登录").first().waitFor();

  // Connections: the module's HA group.
  const inModule = await noEnglish(page.getByTestId("ha-group-1280000100"), "the module's HA group");
  assert.match(inModule, /HA 群组 prod-ha/);
  assert.match(inModule, /虚拟插槽 100/);
  assert.match(inModule, /成员/);
  // The header's warning: the backend's drift summary, translated from its key.
  const warning = await noEnglish(page.getByTestId("ha-warning"), "the header's HA warning");
  assert.match(warning, /HA prod-ha：成员 2 有漂移/);
  assert.match(await page.getByTestId("ha-warning").getAttribute("title"), /HA 群组 prod-ha（序号 1280000100）/);

  // Partition: the group side by side, and the drift check.
  await page.keyboard.press("Alt+2");
  const group = await noEnglish(page.getByTestId("ha-group"), "the HA group panel");
  assert.match(group, /需要同步/);
  assert.match(group, /21\.0 %/);
  assert.match(group, /每秒 10\.0/);
  assert.match(group, /CA_GetHAState 采用 当前 SDK 布局/);
  await page.getByTestId("drift-check").click();
  await page.getByTestId("drift-verdict").waitFor();
  const drift = await noEnglish(page.getByTestId("drift-card"), "the drift check");
  assert.match(drift, /漂移检查/);
  assert.match(drift, /标签 不同/);
  assert.match(drift, /缺失/);
  assert.match(drift, /已比较/);
  await shot(page, "50-ha-zh-Hans");

  // Keys: a key's uses left, the limit dialog, and an Ed25519 key's OpenPGP section.
  await page.keyboard.press("Alt+3");
  await page.locator('[data-testid=key-row][data-label="limited_ecdsa_2026_11"]').first().click();
  const line = await noEnglish(page.getByTestId("usage-line"), "the usage line");
  assert.match(line, /剩余 3 \/ 5 次使用/);
  await page.getByTestId("usage-limit-button").click();
  const dialog = await noEnglish(page.getByRole("dialog"), "the usage-limit dialog");
  assert.match(dialog, /4,294,967,295/);
  await page.keyboard.press("Escape");
  await page.getByRole("dialog").waitFor({ state: "detached" });
  await page.locator('[data-testid=key-row][data-label="release_ed25519"]').last().click();
  const formats = await noEnglish(page.getByTestId("key-formats"), "the OpenPGP section");
  assert.match(formats, /OpenPGP 指纹：/);
  assert.match(formats, /导出 OpenPGP 证书…/);
  assert.equal(await page.getByTestId("openpgp-uid").getAttribute("aria-label"), "OpenPGP 用户 ID");
  await page.getByTestId("openpgp-uid").fill("a\u0007b");
  assert.match(await page.getByTestId("key-formats").innerText(), /用户 ID 只能有一行/);
  await shot(page, "51-key-formats-zh-Hans");

  // HSS keys: every limited key with its burn rate.
  await page.keyboard.press("Alt+6");
  const usage = await noEnglish(page.getByTestId("usage-keys"), "the usage-limited keys");
  assert.match(usage, /设有使用次数上限的密钥/);
  assert.match(usage, /剩余 3 \/ 5 次使用/);
  assert.match(usage, /正常|警告|严重/);

  // Probes: each member's share of a probe on the group.
  await page.keyboard.press("Alt+8");
  await page.getByTestId("probe-op").selectOption("ml-dsa-65-sign");
  await page.getByTestId("probe-run").click();
  const probe = await noEnglish(page.getByTestId("probe-ha"), "the probe's HA shares");
  assert.match(probe, /HA 群组：共每秒 66\.0 次调用/);
  assert.match(probe, /50\.0 %/);
  assert.deepEqual(page.errors, []);
});
