// The Overview (the first view), the charts people read, and the console in each language.
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

const SEEDED = {
  records: 40,
  hssRemaining: 40,
  certificates: [
    { label: "tls_edge_2026", daysLeft: 5 },
    { label: "release_ca_2026", daysLeft: 21 },
    { label: "long_lived", daysLeft: 400 },
  ],
  failedOps: 3,
  brokenAt: 17,
};

async function overview(page) {
  await page.getByRole("button", { name: "Overview" }).click();
  await page.getByTestId("overview-summary").waitFor();
}

test("the overview opens first and lists what needs attention across the partitions, each leading to its view", async () => {
  const page = await openApp(browser, SEEDED);
  await page.getByTestId("overview-summary").waitFor();
  assert.equal(await page.locator("nav.sidebar [aria-current=page]").innerText(), "Overview");
  // Before a login: the card offers it, the keys and certificates say they were not looked at.
  await page.getByTestId("card-login").waitFor();
  assert.match(await page.getByTestId("overview-keys-not-checked").innerText(), /Not looked at \(log in first\): Built-in lunasim/);
  await login(page);
  await page.getByText("user logged in").first().waitFor();
  await overview(page);
  await page.getByTestId("overview-keys").getByTestId("attention-item").first().waitFor();

  const keys = page.getByTestId("overview-keys").getByTestId("attention-item");
  assert.equal(await keys.count(), 1);
  assert.equal(await keys.first().getAttribute("data-severity"), "warning");
  assert.match(await keys.first().innerText(), /fw_hss_2026_11: 40 signatures left, about 27 days at the current rate/);

  const certs = page.getByTestId("overview-certificates").getByTestId("attention-item");
  assert.equal(await certs.count(), 2, "the certificate with 400 days left is not on the list");
  assert.match(await certs.nth(0).innerText(), /tls_edge_2026 expires on .* in 5 days/);
  assert.equal(await certs.nth(0).getAttribute("data-severity"), "critical", "soonest first");
  assert.match(await certs.nth(1).innerText(), /release_ca_2026/);
  assert.match(await page.getByTestId("overview-certificates").innerText(), /3 checked/);

  const audit = page.getByTestId("overview-audit");
  assert.match(await audit.innerText(), /The audit trail is broken at record 17/);
  const failures = page.getByTestId("overview-failures").getByTestId("attention-item");
  assert.equal(await failures.count(), 3);
  assert.match(await failures.first().innerText(), /(login|sign) failed \(PIN_INCORRECT\)/);
  const summary = page.getByTestId("overview-summary");
  assert.equal(await summary.getAttribute("data-attention"), "7");
  assert.match(await summary.innerText(), /7 items need attention/);
  await shot(page, "19-overview");

  // Each item leads to the view that deals with it.
  await certs.nth(0).getByTestId("attention-open").click();
  assert.equal(await page.getByTestId("key-search").inputValue(), "tls_edge_2026", "the Keys view searches for the certificate");
  await overview(page);
  await page.getByTestId("overview-keys").getByTestId("attention-open").click();
  await page.getByTestId("hss-table").waitFor();
  await overview(page);
  await failures.first().getByTestId("attention-open").click();
  await page.getByTestId("audit-records").waitFor();
  const day = await page.getByTestId("audit-from").inputValue();
  assert.match(day, /^2026-11-\d\d$/);
  assert.equal(await page.getByLabel("To date").inputValue(), day, "the table is filtered to the failure's day");
  await page.getByTestId("record-detail").waitFor();
  // The jump was for that visit: the next one starts unfiltered.
  await page.keyboard.press("Alt+1");
  await page.keyboard.press("Alt+9");
  await page.getByTestId("audit-records").waitFor();
  assert.equal(await page.getByTestId("audit-from").inputValue(), "");
  assert.deepEqual(page.errors, []);
});

test("empty states say what to do: no module, nothing to report", async () => {
  const page = await openApp(browser, { noModules: true });
  await page.getByTestId("overview-summary").waitFor();
  await page.getByText("No module yet").waitFor();
  await page.getByRole("button", { name: "Go to Connections" }).click();
  await page.getByTestId("module-path").waitFor();

  const fine = await openApp(browser, { records: 5 });
  await login(fine);
  await fine.getByText("user logged in").first().waitFor();
  await fine.keyboard.press("Alt+9");
  await fine.getByTestId("verify-trail").click();
  await fine.getByTestId("verdict").waitFor();
  await overview(fine);
  await fine.getByTestId("overview-summary").filter({ hasText: "Nothing needs attention" }).waitFor();
  assert.match(await fine.getByTestId("overview-keys-empty").innerText(), /No key runs out within 30 days/);
  assert.match(await fine.getByTestId("overview-failures-empty").innerText(), /No operation failed/);
});

test("an HA member down and a usage-limited key running out are on the overview, each leading to its view", async () => {
  const page = await openApp(browser, { records: 5, ha: "member_down", usageLimit: 4 });
  await login(page);
  await page.getByText("user logged in").first().waitFor();
  await overview(page);
  const card = page.getByTestId("partition-card");
  const ha = card.getByTestId("card-ha");
  await ha.waitFor();
  assert.equal(await ha.getAttribute("data-healthy"), "false");
  assert.match(await ha.innerText(), /prod-ha: 1 of 2 members online/);
  assert.match(await ha.getByTestId("card-ha-drift").innerText(), /last check .*: member 2 down; member 1 in sync/);
  const down = card.locator("[data-testid=attention-item][data-kind=ha]");
  assert.equal(await down.getAttribute("data-severity"), "warning");
  assert.match(await down.innerText(), /HA group prod-ha: 1 of 2 members down \(2 \(1280000102, CKR_UNABLE_TO_CONNECT\)\)/);

  // 2 of 4 uses left at 0.1 a day: 20 days, a warning, beside the HSS keys.
  const usage = page.getByTestId("overview-keys").locator("[data-testid=attention-item][data-kind=usage_limit]");
  assert.equal(await usage.getAttribute("data-severity"), "warning");
  assert.match(await usage.innerText(), /limited_ecdsa_2026_11: 2 of 4 uses left, about 20 days at the current rate/);
  assert.match(await page.getByTestId("overview-keys").innerText(), /1 checked/);

  // The key leads to the Keys view, where its limit is raised; the group to its Partition view.
  await usage.getByTestId("attention-open").click();
  assert.equal(await page.getByTestId("key-search").inputValue(), (7777).toString(16).padStart(32, "0"));
  await overview(page);
  await down.getByTestId("attention-open").click();
  await page.getByTestId("ha-group").waitFor();
  assert.deepEqual(page.errors, []);
});

test("an HA group's drift on the overview and in the Partition view reads in 繁體中文", async () => {
  const page = await openApp(browser, { records: 5, ha: "drift" }, { locale: "zh-TW" });
  await page.keyboard.press("Alt+1");
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByText("使用者已登入").first().waitFor();
  await page.getByRole("button", { name: "總覽" }).click();
  await page.getByTestId("overview-summary").waitFor();
  const item = page.getByTestId("partition-card").locator("[data-testid=attention-item][data-kind=ha]");
  await item.waitFor();
  const text = await item.innerText();
  assert.match(text, /HA 群組 prod-ha：.*的檢查發現成員不一致（成員 2 有漂移）/);
  assert.doesNotMatch(text, /drift on/);
  await item.getByTestId("attention-open").click();
  await page.getByTestId("ha-group").waitFor();
  await page.getByTestId("drift-check").click();
  const verdict = page.getByTestId("drift-verdict");
  await verdict.waitFor();
  assert.match(await verdict.innerText(), /成員 2 有漂移/);
  assert.match(await page.locator("main").innerText(), /KCV = 以 AES-ECB 加密全零區塊/);
  await shot(page, "62-overview-ha-zh-Hant");
  assert.deepEqual(page.errors, []);
});

test("a locked PIN, a PIN to be changed and an HSM at its ceiling are on the partition's card", async () => {
  const page = await openApp(browser, { pinLocked: true, pinToBeChanged: true, busyPercent: 97 });
  await page.getByTestId("partition-card").waitFor();
  // The busy share needs two samples: refresh once more.
  await page.getByTestId("overview-refresh").click();
  const card = page.getByTestId("partition-card");
  await card.getByText(/The HSM is 97 % busy/).waitFor();
  const text = await card.innerText();
  assert.match(text, /user PIN locked/);
  assert.match(text, /user PIN must be changed/);
  assert.match(text, /The user PIN is locked: the security officer must unlock or reset it/);
  assert.equal(await card.locator("[data-kind=user_pin][data-severity=critical]").count(), 1);
});

/// Each chart text's size against the body's (px), and the chart's text content.
async function chartText(page, testId) {
  return page.evaluate((id) => {
    const body = parseFloat(getComputedStyle(document.body).fontSize);
    const texts = [...document.querySelectorAll(`[data-testid="${id}"] svg text`)];
    return { body, sizes: texts.map((t) => parseFloat(getComputedStyle(t).fontSize)), words: texts.map((t) => t.textContent) };
  }, testId);
}

function assertReadable({ body, sizes }, name) {
  assert.ok(sizes.length > 5, `${name} has axis text (${sizes.length})`);
  const small = sizes.filter((s) => s < body);
  assert.deepEqual(small, [], `${name}: text smaller than the body's ${body} px`);
}

test("charts are drawn at the panel's width with text at the body's size, units on the axes, values on hover", async () => {
  const page = await openApp(browser, { hssRemaining: 40, records: 300, failedOps: 4 }, { view: "stats" });
  await page.getByTestId("stats-luna").waitFor();
  await page.getByRole("button", { name: "Sample now" }).click();
  await page.getByTestId("busy").filter({ hasText: "40.0 %" }).waitFor();
  const load = page.getByTestId("chart-load");
  await load.locator("svg").waitFor();
  const t = await chartText(page, "chart-load");
  assertReadable(t, "the load chart");
  assert.ok(t.words.includes("busy (%)"), `a unit on the y axis: ${t.words}`);
  assert.ok(t.words.includes("time since watching (s)"), "a unit on the x axis");
  // As wide as its panel.
  const [svgWidth, panelWidth] = await load.evaluate((el) => [
    el.querySelector("svg").getBoundingClientRect().width,
    el.getBoundingClientRect().width,
  ]);
  assert.ok(Math.abs(svgWidth - panelWidth) < 2, `${svgWidth} vs ${panelWidth}`);
  // The value under the pointer.
  const box = await load.locator("svg").boundingBox();
  await page.mouse.move(box.x + box.width - 30, box.y + box.height / 2);
  const tip = page.getByTestId("chart-load-tooltip");
  await tip.waitFor();
  assert.match(await tip.innerText(), /busy: 40 %/);
  await shot(page, "20-statistics-charts");
  // The export is the same chart at print size, in the light theme.
  await load.getByRole("button", { name: "SVG…" }).click();
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "save_export"));
  const saved = (await calls(page, "save_export")).at(-1).args;
  assert.equal(saved.fileName, "hsm-busy.svg");
  assert.match(saved.content.text, /^<\?xml[^]*<svg[^>]* width="1600" height="800"/);
  assert.match(saved.content.text, /font-size="22"[^>]*>busy \(%\)</);

  await login(page);
  await page.getByText("user logged in").first().waitFor();
  await page.keyboard.press("Alt+6");
  const hss = page.getByTestId("hss-chart");
  await hss.locator("svg").waitFor();
  const h = await chartText(page, "hss-chart");
  assertReadable(h, "the HSS chart");
  assert.ok(
    h.words.some((w) => /^warning \(10 %\)$/.test(w)) && h.words.some((w) => /^critical \(1 %\)$/.test(w)),
    `thresholds drawn: ${h.words}`,
  );
  assert.ok(h.words.includes("projected at the current rate"), "the projection is in the legend");
  const hb = await hss.locator("svg").boundingBox();
  await page.mouse.move(hb.x + hb.width * 0.25, hb.y + hb.height / 2);
  await page
    .getByTestId("hss-chart-tooltip")
    .filter({ hasText: /left \(from the audit trail\): [\d,]+/ })
    .waitFor();
  // The legend sits above the plot: no legend text inside the plot's frame.
  const overlap = await hss.evaluate((el) => {
    const legend = [...el.querySelectorAll(".chart-legend text")].map((t) => t.getBoundingClientRect().bottom);
    const ticks = [...el.querySelectorAll(".chart-tick")].map((t) => t.getBoundingClientRect().top);
    const gridTop = Math.min(...[...el.querySelectorAll(".chart-axis")].map((l) => l.getBoundingClientRect().top));
    return { legendBottom: Math.max(...legend), gridTop, ticks: ticks.length };
  });
  assert.ok(overlap.legendBottom <= overlap.gridTop, `legend ends at ${overlap.legendBottom}, the plot starts at ${overlap.gridTop}`);
  await shot(page, "21-hss-chart");

  // Records per day above the audit table; failures red; a click filters the table to the day.
  await page.keyboard.press("Alt+9");
  const days = page.getByTestId("audit-days");
  await days.locator("svg").waitFor();
  assertReadable(await chartText(page, "audit-days"), "the records-per-day chart");
  const bad = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue("--bad").trim());
  const fills = await days.locator("rect").evaluateAll((rs) => rs.map((r) => r.getAttribute("fill")));
  assert.ok(fills.includes(bad), `failures in ${bad}: ${[...new Set(fills)]}`);
  const last = days.locator(".chart-bar").last();
  const lb = await last.boundingBox();
  await page.mouse.move(lb.x + lb.width / 2, lb.y + lb.height - 5);
  await page
    .getByTestId("audit-days-tooltip")
    .filter({ hasText: /failed: 4/ })
    .waitFor();
  await page.mouse.click(lb.x + lb.width / 2, lb.y + lb.height - 5);
  const day = await page.getByTestId("audit-from").inputValue();
  assert.match(day, /^2026-11-30$/);
  assert.equal(await page.getByLabel("To date").inputValue(), day);
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll("[data-testid=audit-row]")];
    return rows.length > 0 && rows.every((r) => r.textContent.includes("2026-11-30"));
  });
  await shot(page, "22-audit-per-day");
  assert.deepEqual(page.errors, []);
});

test("charts follow the dark theme", async () => {
  const page = await openApp(browser, {}, { view: "stats", colorScheme: "dark" });
  await page.getByTestId("chart-load").locator("svg").waitFor();
  const [panel, background, text, tick] = await page.evaluate(() => {
    const s = getComputedStyle(document.documentElement);
    const svg = document.querySelector("[data-testid=chart-load] svg");
    return [
      s.getPropertyValue("--panel").trim(),
      svg.querySelector("rect").getAttribute("fill"),
      s.getPropertyValue("--text").trim(),
      svg.querySelector(".chart-title").getAttribute("fill"),
    ];
  });
  assert.equal(background, panel);
  assert.equal(tick, text);
  assert.equal(panel, "#1c2027", "the dark panel colour");
});

test("繁體中文 from the system's locale: every view, the backend's errors translated (codes stay English)", async () => {
  const page = await openApp(browser, { ...SEEDED, pinTriesBeforeFinal: 1 }, { locale: "zh-TW" });
  await page.getByRole("heading", { name: "總覽" }).waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.lang), "zh-Hant");
  assert.equal(await page.locator("nav.sidebar [aria-current=page]").innerText(), "總覽");
  assert.match(await page.locator("nav.sidebar").innerText(), /稽核軌跡/);
  const broken = await page.getByTestId("overview-audit").innerText();
  assert.match(broken, /稽核軌跡在第 17 筆記錄處斷裂/);
  // What is wrong is the verifier's finding, translated inside the sentence.
  assert.match(broken, /記錄 17 在寫入後遭到更改/);
  assert.doesNotMatch(broken, /was changed/);
  await shot(page, "23-overview-zh-Hant");
  await page.keyboard.press("Alt+1");
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("0000");
  await page.getByTestId("login-submit").click();
  const box = page.getByRole("dialog").getByRole("alert");
  await box.waitFor();
  const text = await box.innerText();
  assert.match(text, /登入遭拒: PIN 不正確。/);
  assert.match(text, /建議處置：請檢查 PIN 後再試一次/);
  assert.match(text, /C_Login.*回傳.*CKR_PIN_INCORRECT/);
  assert.equal(await box.getAttribute("data-code"), "PIN_INCORRECT");
  await shot(page, "24-wrong-pin-zh-Hant");
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByText("使用者已登入").first().waitFor();
  for (const [key, heading] of [
    ["Alt+2", "Built-in lunasim"],
    ["Alt+3", "金鑰"],
    ["Alt+4", "簽署發行檔案"],
    ["Alt+5", "驗證簽章"],
    ["Alt+6", "HSS 金鑰"],
    ["Alt+7", "統計"],
    ["Alt+8", "延遲探測"],
    ["Alt+9", "稽核軌跡"],
    ["Alt+0", "設定"],
  ]) {
    await page.keyboard.press(key);
    await page.locator("h1").filter({ hasText: heading }).first().waitFor();
  }
  await page.keyboard.press("Alt+9");
  await page.getByTestId("audit-days").locator("svg").waitFor();
  await shot(page, "25-audit-zh-Hant");
  assert.deepEqual(page.errors, []);
});

test("简体中文 from the system's locale, with the mainland terms", async () => {
  const page = await openApp(browser, SEEDED, { locale: "zh-CN" });
  await page.getByRole("heading", { name: "总览" }).waitFor();
  const nav = await page.locator("nav.sidebar").innerText();
  assert.match(nav, /审计轨迹/);
  assert.match(nav, /密钥/);
  assert.match(nav, /签名/);
  await shot(page, "26-overview-zh-Hans");
  await page.keyboard.press("Alt+1");
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByText("用户已登录").first().waitFor();
  await page.keyboard.press("Alt+6");
  await page.locator("h1").filter({ hasText: "HSS 密钥" }).waitFor();
  await page.keyboard.press("Alt+7");
  await page.getByTestId("chart-load").locator("svg").waitFor();
  assert.match(await page.getByTestId("chart-load").innerText(), /HSM 忙碌率/);
  await shot(page, "27-statistics-zh-Hans");
});

test("a broken trail's finding reads in the officer's language in the Audit view", async () => {
  const page = await openApp(browser, { records: 300, tamperedSeq: 150, tamperKind: "reordered" }, { locale: "zh-CN" });
  await page.getByRole("heading", { name: "总览" }).waitFor();
  await page.keyboard.press("Alt+1");
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByText("用户已登录").first().waitFor();
  await page.keyboard.press("Alt+9");
  await page.getByTestId("verify-trail").click();
  const v = page.getByTestId("verdict");
  await v.waitFor();
  const text = await v.innerText();
  assert.match(text, /记录 150 位置错误：它写入时是记录 153。/);
  assert.doesNotMatch(text, /out of place/);
  // The finding's code stays English, as error codes do.
  assert.match(text, /reordered/);
  await shot(page, "28-audit-broken-zh-Hans");
  assert.deepEqual(page.errors, []);
});

test("a probe's verdict and capacity plan read in 繁體中文", async () => {
  const page = await openApp(browser, {}, { locale: "zh-TW" });
  await page.keyboard.press("Alt+1");
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByText("使用者已登入").first().waitFor();
  await page.keyboard.press("Alt+8");
  await page.getByTestId("probe-op").selectOption("ml-dsa-65-sign");
  await page.getByTestId("probe-workers").fill("1,2,4");
  await page.getByTestId("probe-run").click();
  await page.getByTestId("probe-report").waitFor();
  const verdict = await page.getByTestId("probe-verdict").innerText();
  assert.match(verdict, /HSM 的上限約為每秒 66 次操作：從 2 到 4 個工作執行緒/);
  assert.doesNotMatch(verdict, /Ceiling/);
  await page.getByTestId("capacity-target").fill("200");
  await page.getByTestId("capacity-plan").click();
  const plan = await page.getByTestId("capacity-result").innerText();
  assert.match(plan, /^4 台 HSM（每台維持在其 66 ops\/s 上限的 80 % 以內），再於每台 HSM 使用 1 個工作階段/);
  await shot(page, "29-probe-zh-Hant");
  assert.deepEqual(page.errors, []);
});

test("files that cannot be signed say why in 简体中文", async () => {
  const page = await openApp(browser, {}, { locale: "zh-CN" });
  await page.getByRole("heading", { name: "总览" }).waitFor();
  await page.keyboard.press("Alt+1");
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByText("用户已登录").first().waitFor();
  await page.evaluate(() => window.__mock.drop(["/srv/release/app-1.0.tar.gz", "/srv/release/", "/srv/release/empty.bin"]));
  await page.getByTestId("sign-files").waitFor();
  const list = await page.getByTestId("sign-files").innerText();
  assert.match(list, /\/srv\/release\/ 是文件夹；请拖放其中的文件（或它的归档文件）。/);
  assert.match(list, /\/srv\/release\/empty\.bin 是空的（0 字节）/);
  assert.doesNotMatch(list, /is a folder|is empty/);
  assert.deepEqual(page.errors, []);
});

test("an HSS counter that disagrees with the trail is said loudly in 繁體中文", async () => {
  const page = await openApp(browser, { hssRemaining: 40, hssMismatch: { now: 40, expected: 42 } }, { locale: "zh-TW" });
  await page.keyboard.press("Alt+1");
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByText("使用者已登入").first().waitFor();
  await page.keyboard.press("Alt+6");
  const box = await page.getByTestId("hss-mismatch").innerText();
  assert.match(box, /權杖顯示剩餘 40 次簽章，但稽核軌跡記載應剩 42 次：有 2 次是在此主控台之外產生的/);
  assert.doesNotMatch(box, /made outside/);
  assert.deepEqual(page.errors, []);
});

test("a signature's verdict reads in 简体中文", async () => {
  const page = await openApp(browser, {}, { locale: "zh-CN" });
  await page.getByRole("heading", { name: "总览" }).waitFor();
  await page.keyboard.press("Alt+5");
  await page.getByTestId("verify-file").fill("/srv/release/app-1.0.tar.gz");
  await page.getByTestId("verify-sig").fill("/srv/release/app-1.0.tar.gz.p7s");
  await page.getByTestId("verify-submit").click();
  const report = page.locator("[data-testid=verify-report][data-valid=true]");
  await report.waitFor();
  const text = await report.innerText();
  assert.match(text, /签名属性带有文件的 SHA-256 摘要，且其上的 ML-DSA-65 签名验证通过/);
  assert.doesNotMatch(text, /signed attributes/);
  assert.deepEqual(page.errors, []);
});

test("the language is a setting: chosen in Settings, kept by the backend, back to the system's on request", async () => {
  const page = await openApp(browser);
  await page.keyboard.press("Alt+0");
  await page.getByTestId("language").selectOption("zh-Hant");
  await page.getByTestId("settings-save").click();
  await page.getByRole("heading", { name: "設定" }).waitFor();
  assert.equal(await page.evaluate(() => window.__mock.settings.language), "zh-Hant");
  assert.equal(await page.locator("nav.sidebar button").first().innerText(), "總覽");
  await page.getByTestId("language").selectOption("");
  await page.getByTestId("settings-save").click();
  await page.getByRole("heading", { name: "Settings" }).waitFor();
  assert.equal(await page.evaluate(() => window.__mock.settings.language), null);
});
