// The PQC readiness view: what it shows is checked against the standards themselves —
// NIST IR 8547 (ipd, tables 2 and 4: 112-bit quantum-vulnerable algorithms deprecated after
// 2030 and disallowed after 2035, stronger ones disallowed after 2035, weaker ones already),
// SP 800-57 Pt. 1 r5 table 2 (RSA-2048: 112 bits; P-256: 128), FIPS 204 (ML-DSA-65 is
// category 3) and CNSA 2.0 (only ML-DSA-87, ML-KEM-1024, AES-256, LMS/HSS; signing
// exclusively CNSA 2.0 by 2030). Then the successor dialog filled in, the policy switched and
// remembered, the CBOM export, the Overview's items, the empty states, and Chinese.
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

const TODAY = "2026-12-06";
const SEEDED = { pqc: true, today: TODAY, savedCbom: "/home/officer/cbom.cdx.json" };

async function openPqc(page, name = "PQC readiness") {
  await page.getByRole("button", { name, exact: true }).click();
}

const row = (page, label, cls = "PRIVATE_KEY") => page.locator(`[data-testid=pqc-row][data-label="${label}"][data-class=${cls}]`);

/// The row's cells by column: object, algorithm, class, category, dates, status, use, action.
async function cells(page, label, cls) {
  return row(page, label, cls).locator("td").allInnerTexts();
}

test("every key judged under NIST IR 8547: counts, dates, use and the successor", async () => {
  const page = await openApp(browser, SEEDED);
  await login(page);
  await page.getByText("user logged in").first().waitFor();
  await openPqc(page);
  await page.getByTestId("pqc-table").waitFor();
  assert.equal(await page.getByTestId("pqc-policy-name").innerText(), `Judged under NIST IR 8547 on ${TODAY}.`);

  // Counts: RSA-2048, P-256 (pairs), RSA-1024, P-384 and the P-256 certificate are broken by
  // Shor's algorithm; ML-DSA-65 (a pair) is post-quantum; AES-256 is symmetric.
  const counts = page.locator("[data-testid=pqc-counts-row]").first();
  const count = async (sel) => counts.locator(sel).innerText();
  assert.equal(await count("[data-class=quantum_vulnerable]"), "7");
  assert.equal(await count("[data-class=post_quantum]"), "2");
  assert.equal(await count("[data-class=not_quantum_relevant]"), "1");
  assert.equal(await count("[data-class=unknown]"), "0");
  // RSA-1024 (80 bits) is below 112: disallowed already; nothing else has a date this year.
  assert.equal(await count("[data-status=past_due]"), "1");
  assert.equal(await count("[data-status=deprecated]"), "0");
  assert.equal(await count("[data-status=due_within_a_year]"), "0");

  // RSA-2048: 112 bits, no category, deprecated after 2030, disallowed after 2035.
  const rsa = await cells(page, "release_rsa_2048");
  assert.match(rsa[1], /RSA-2048\s+112-bit classical security/);
  assert.equal(rsa[2], "Quantum-vulnerable");
  assert.equal(rsa[3], "none");
  assert.match(rsa[4], /deprecated after 2030-12-31\s+disallowed after 2035-12-31/);
  assert.equal(rsa[5], "Allowed");
  // Its use as the trail records it, and the successor for release signing.
  assert.match(rsa[6], /Last use .*2026/);
  assert.match(rsa[6], /12 signatures in 30 days, 40 in 90 days/);
  assert.match(rsa[6], /Signed lately: app-2\.4\.1\.tar\.gz, app-2\.4\.0\.tar\.gz/);
  assert.match(rsa[7], /ML-DSA-65 for release signing \(ML-DSA-87 for the highest category\); for firmware, LMS\/HSS or ML-DSA-87/);
  await row(page, "release_rsa_2048").getByTestId("pqc-dual-sign").waitFor();
  // P-256: 128 bits, so no deprecation, disallowed after 2035; never used.
  const p256 = await cells(page, "test_p256");
  assert.match(p256[1], /128-bit classical security/);
  assert.equal(p256[4], "disallowed after 2035-12-31");
  assert.match(p256[6], /Never used/);
  // ML-DSA-65: FIPS 204 category 3, allowed with no date; nothing to do.
  const mldsa = await cells(page, "release_ml_dsa_65");
  assert.equal(mldsa[2], "Post-quantum");
  assert.equal(mldsa[3], "category 3");
  assert.equal(mldsa[4], "no date");
  assert.equal(mldsa[7], "Nothing to do under this policy.");
  // AES-256 is not quantum-relevant at that strength.
  const aes = await cells(page, "backup_aes_256", "SECRET_KEY");
  assert.equal(aes[2], "Not quantum-relevant");
  assert.equal(aes[4], "no date");
  // The key-agreement key moves to ML-KEM; the certificate is judged by its key.
  assert.match((await cells(page, "tls_kex_p384"))[7], /ML-KEM-768/);
  const cert = await cells(page, "codesign_2026", "CERTIFICATE");
  assert.match(cert[1], /ECDSA P-256 signed with ecdsa-with-SHA256/);
  assert.equal(cert[4], "disallowed after 2035-12-31");

  // What needs doing first is at the top: the disallowed RSA-1024 key, then the most used.
  const labels = await page.locator("[data-testid=pqc-row]").evaluateAll((rs) => rs.map((r) => r.dataset.label));
  assert.equal(labels[0], "legacy_rsa_1024");
  assert.equal((await cells(page, "legacy_rsa_1024"))[5], "Disallowed");
  assert.ok(labels.indexOf("release_rsa_2048") < labels.indexOf("test_p256"), labels.join(" "));

  // The time line, in words beside the chart: RSA-1024 after 2013, the RSA-2048 pair
  // deprecated after 2030, six objects disallowed after 2035.
  const years = await page.locator("[data-testid=pqc-timeline] li").allInnerTexts();
  assert.deepEqual(years, [
    "After 2013: 0 deprecated, 1 disallowed",
    "After 2030: 2 deprecated, 0 disallowed",
    "After 2035: 0 deprecated, 6 disallowed",
  ]);
  const chart = page.getByTestId("pqc-timeline-chart").locator("svg");
  assert.equal(await chart.getAttribute("aria-label"), "Objects by the year after which NIST IR 8547 deprecates or disallows them");
  const chartText = await chart.locator("text").allTextContents();
  assert.ok(chartText.includes("2013") && chartText.includes("after the end of year"), chartText.join("|"));
  assert.ok(chartText.includes("deprecated") && chartText.includes("disallowed"), "the legend names both series");
  await shot(page, "60-pqc-nist");
  assert.deepEqual(page.errors, []);
});

test("Generate successor… fills in the key generation dialog, from the keyboard too", async () => {
  const page = await openApp(browser, SEEDED);
  await login(page);
  await page.getByText("user logged in").first().waitFor();
  await openPqc(page);
  await page.getByTestId("pqc-table").waitFor();
  // Rows take the focus and move with the arrows; Enter opens the dialog for the row.
  await row(page, "legacy_rsa_1024").focus();
  await page.keyboard.press("ArrowDown");
  const focused = await page.evaluate(() => document.activeElement?.getAttribute("data-label"));
  assert.equal(focused, await page.locator("[data-testid=pqc-row]").nth(1).getAttribute("data-label"));
  await row(page, "release_rsa_2048").focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog");
  await dialog.waitFor();
  assert.equal(await page.getByTestId("preset").inputValue(), "ml-dsa-65");
  assert.equal(await page.getByTestId("key-label").inputValue(), "release_ml_dsa_65");
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "detached" });

  // A key-agreement key: ML-KEM-768, its label from the old one; generated as filled in.
  await row(page, "tls_kex_p384").getByTestId("pqc-generate-successor").click();
  await dialog.waitFor();
  assert.equal(await page.getByTestId("preset").inputValue(), "ml-kem-768");
  assert.equal(await page.getByTestId("key-label").inputValue(), "tls_kex_ml_kem_768");
  await shot(page, "61-pqc-successor");
  await page.getByTestId("generate-submit").click();
  await dialog.waitFor({ state: "detached" });
  const [gen] = await calls(page, "generate_key");
  assert.deepEqual(gen.args.request.spec, { kind: "ml-kem", set: "ML-KEM-768" });
  assert.equal(gen.args.request.label, "tls_kex_ml_kem_768");
  // The new key is judged with the rest: post-quantum, category 3 (FIPS 203).
  await row(page, "tls_kex_ml_kem_768").first().waitFor();
  assert.ok((await row(page, "tls_kex_ml_kem_768").first().locator("td").allInnerTexts()).includes("category 3"));

  // A signing key points to dual signing: the Sign view's "Also sign with".
  await row(page, "release_rsa_2048").getByRole("button", { name: "Open Sign" }).click();
  assert.equal(await page.locator("nav.sidebar [aria-current=page]").innerText(), "Sign");
  assert.deepEqual(page.errors, []);
});

test("the policy is switched in the view, remembered in Settings, and the CBOM exported under it", async () => {
  const page = await openApp(browser, SEEDED);
  await login(page);
  await page.getByText("user logged in").first().waitFor();
  await openPqc(page);
  await page.getByTestId("pqc-table").waitFor();
  await page.getByTestId("pqc-view-policy").selectOption("cnsa2");
  await page.getByText(`Judged under CNSA 2.0 on ${TODAY}.`).waitFor();
  const [saved] = await calls(page, "update_settings");
  assert.equal(saved.args.settings.pqc_policy, "cnsa2");
  // CNSA 2.0: signing outside the suite is CNSA-only by 2030 — RSA-2048 and even ML-DSA-65
  // (only ML-DSA-87 is in the suite) are deprecated now; AES-256 is in the suite.
  const rsa = await cells(page, "release_rsa_2048");
  assert.match(rsa[4], /disallowed after 2030-12-31/);
  assert.equal(rsa[5], "Deprecated");
  assert.match(rsa[7], /ML-DSA-87 \(LMS\/HSS for firmware\), as CNSA 2\.0 requires/);
  const mldsa = await cells(page, "release_ml_dsa_65");
  assert.equal(mldsa[5], "Deprecated");
  assert.equal((await cells(page, "backup_aes_256", "SECRET_KEY"))[5], "Allowed");
  // Key agreement outside the suite: ML-KEM-1024, disallowed after 2033.
  const kex = await cells(page, "tls_kex_p384");
  assert.match(kex[4], /disallowed after 2033-12-31/);
  assert.match(kex[7], /ML-KEM-1024/);

  // Remembered: Settings shows it, and the view opens under it again.
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  assert.equal(await page.getByTestId("pqc-policy").inputValue(), "cnsa2");
  await openPqc(page);
  await page.getByText(`Judged under CNSA 2.0 on ${TODAY}.`).waitFor();

  await page.getByTestId("pqc-export-cbom").click();
  await page.getByText("CBOM saved to /home/officer/cbom.cdx.json").waitFor();
  const [cbom] = await calls(page, "pqc_export_cbom");
  assert.deepEqual(cbom.args, { partitionId: null, policy: "cnsa2" });
  await shot(page, "62-pqc-cnsa");
  assert.deepEqual(page.errors, []);
});

test("the Overview's PQC items name the keys and lead to the readiness view", async () => {
  const page = await openApp(browser, SEEDED);
  await login(page);
  await page.getByText("user logged in").first().waitFor();
  await page.getByRole("button", { name: "Overview" }).click();
  const item = page.locator("[data-testid=attention-item][data-kind=pqc]");
  await item.waitFor();
  assert.equal(await item.count(), 1, "nothing else is due within a year under NIST IR 8547");
  assert.equal(await item.getAttribute("data-severity"), "critical");
  assert.match(await item.innerText(), /1 key\(s\) disallowed under NIST IR 8547 .*: legacy_rsa_1024 \(RSA-1024; 0\)/);
  await item.getByTestId("attention-open").click();
  assert.equal(await page.locator("nav.sidebar [aria-current=page]").innerText(), "PQC readiness");
  await page.getByTestId("pqc-table").waitFor();
  assert.deepEqual(page.errors, []);
});

test("empty states say what to do: no partition, not logged in, nothing on the token", async () => {
  const none = await openApp(browser, { noModules: true });
  await openPqc(none);
  await none.getByText("Add a module and open a token in Connections: its keys are judged here.").waitFor();
  const page = await openApp(browser, { today: TODAY });
  await openPqc(page);
  await page.getByText("No partition is logged in").waitFor();
  assert.equal(await page.getByTestId("pqc-export-cbom").isDisabled(), true);
  // Its action leads to where the login is.
  await page.getByRole("button", { name: "Go to Connections" }).click();
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByText("user logged in").first().waitFor();
  await openPqc(page);
  await page.getByText("No keys or certificates").waitFor();
  await page.getByRole("button", { name: "Go to Keys" }).waitFor();
  assert.deepEqual(page.errors, []);
  assert.deepEqual(none.errors, []);
});

/// Names written the same in every language: key labels, algorithms, files, the policy and
/// its source (the policy file's own words, as a key's label is the token's).
const NAMES =
  /NIST IR 8547 ipd \(2024-11\), tables 2 and 4; strengths from SP 800-57 Pt\. 1 r5, table 2|release_rsa_2048|release_ml_dsa_65|test_p256|backup_aes_256|legacy_rsa_1024|tls_kex_p384|codesign_2026|Built-in lunasim|ecdsa-with-SHA256|ML-DSA-\d+|ML-KEM-\d+|LMS\/HSS|RSA-\d+|ECDSA P-\d+|AES-\d+|NIST IR 8547|NIST|CNSA|CA|app-[\d.]+tar\.gz|[\w-]*\d[\w-]*/g;

test("the readiness view in 繁體中文: every word from the catalog", async () => {
  const page = await openApp(browser, SEEDED, { locale: "zh-TW" });
  await page.keyboard.press("Alt+1");
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByText("使用者已登入").first().waitFor();
  await openPqc(page, "PQC 就緒");
  await page.getByTestId("pqc-table").waitFor();
  const view = await page.getByTestId("pqc-view").innerText();
  const english = (view.replace(NAMES, " ").match(/[A-Za-z][A-Za-z'’]*/g) ?? []).filter((w) => /[a-z]/.test(w));
  assert.deepEqual(english, [], view);
  assert.match(view, /後量子就緒狀態/);
  assert.match(view, /依 NIST IR 8547 於 2026-12-06 評估。/);
  const rsa = await cells(page, "release_rsa_2048");
  assert.equal(rsa[2], "易受量子攻擊");
  assert.match(rsa[4], /2030-12-31 之後不建議使用\s+2035-12-31 之後不允許/);
  assert.match(rsa[6], /30 天內 12 個簽章，90 天內 40 個/);
  assert.match(rsa[7], /發行簽署用 ML-DSA-65/);
  assert.equal((await cells(page, "release_ml_dsa_65"))[3], "類別 3");
  assert.match((await cells(page, "test_p256"))[6], /從未使用/);
  const years = await page.locator("[data-testid=pqc-timeline] li").allInnerTexts();
  assert.equal(years[1], "2030 年之後：2 個不建議使用，0 個不允許");
  await row(page, "release_rsa_2048").getByTestId("pqc-generate-successor").click();
  assert.equal(await page.getByTestId("key-label").inputValue(), "release_ml_dsa_65");
  await shot(page, "63-pqc-zh-Hant");
  assert.deepEqual(page.errors, []);
});

// Part 5 of the issue: today's volume from the trail (the two release keys: 40 + 3
// signatures, last in the same minute), costed at their successor ML-DSA-65, against the
// latest probe of ML-DSA-65 signing on the partition — run here with one click. The mock's
// sweep peaks at 68/s: 43/60 = 0.717/s is 1.05 % of one HSM, 0.8 / 0.0105 = 75.9× headroom.
test("will the HSM keep up: the trail's volume at the successor, probed with one click", async () => {
  const page = await openApp(browser, SEEDED);
  await login(page);
  await page.getByText("user logged in").first().waitFor();
  await openPqc(page);
  const card = page.getByTestId("pqc-capacity");
  await card.waitFor();
  assert.match(
    await card.getByTestId("pqc-capacity-volume").innerText(),
    /^Signatures in the last 90 days: 43\. Busiest minute: 43 \(.+ UTC\); busiest day: 43 \(.+\)\.$/,
  );
  const op = card.locator("[data-testid=pqc-capacity-op][data-op=ml-dsa-65-sign]");
  assert.deepEqual(await op.locator("td").allInnerTexts(), ["ML-DSA-65 signing", "2", "0.72/s", "Run a probe", "—"]);
  assert.equal(await card.getByTestId("pqc-capacity-verdict").getAttribute("data-verdict"), "needs_probe");

  await op.getByTestId("pqc-run-probe").click();
  await card.getByTestId("pqc-probe-progress").waitFor();
  await card.locator("[data-testid=pqc-capacity-verdict][data-verdict=keeps_up]").waitFor({ timeout: 20_000 });
  const [run] = await calls(page, "run_probe");
  assert.deepEqual(run.args.request.op, { op: "ml-dsa-sign", set: "ML-DSA-65" });
  assert.deepEqual(run.args.request.sweep, [1, 2, 4, 8, 16]);
  const cells = await op.locator("td").allInnerTexts();
  assert.match(cells[3], /^68\.0\/s measured on /);
  assert.equal(cells[4], "1.1 % of one HSM");
  assert.match(
    await card.getByTestId("pqc-capacity-verdict").innerText(),
    /Keeps up\s+At the successors, the busiest minute takes 1\.1 % of one HSM: it could grow 75\.9 times before it passes 80 % of the measured ceiling\./,
  );
  await card.getByText("By key").click();
  const keys = await card.locator("[data-testid=pqc-capacity-key]").evaluateAll((rs) => rs.map((r) => r.dataset.label));
  assert.deepEqual(keys.sort(), ["release_ml_dsa_65", "release_rsa_2048"]);
  await shot(page, "64-pqc-capacity");
  assert.deepEqual(page.errors, []);
});
