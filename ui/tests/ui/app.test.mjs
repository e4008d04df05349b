// UI flows in headless Chromium against the production build, IPC mocked from the
// generated types. Each test opens a fresh page (and a fresh mock backend).
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

test("opens ready to use on the built-in partition, with the emulator banner", async () => {
  const page = await openApp(browser);
  await page.getByTestId("emulator-banner").waitFor();
  assert.match(await page.getByTestId("emulator-banner").innerText(), /not for production keys/);
  assert.match(await page.getByTestId("current-partition").innerText(), /Built-in lunasim/);
  assert.equal(await page.getByTestId("audit-badge").getAttribute("data-state"), "no_key_yet");
  await shot(page, "01-overview");
  assert.deepEqual(page.errors, []);
});

test("a wrong PIN is reported once with the attempts left, and the field is cleared", async () => {
  const page = await openApp(browser, { pinTriesBeforeFinal: 1 });
  await login(page, "0000");
  const box = page.getByRole("dialog").getByRole("alert");
  await box.waitFor();
  const text = await box.innerText();
  assert.match(text, /The PIN is incorrect/);
  assert.match(text, /one attempt is left/);
  assert.match(text, /CKR_PIN_INCORRECT/);
  assert.equal(await page.getByTestId("pin-input").inputValue(), "", "the PIN field is cleared after use");
  assert.equal((await calls(page, "login")).length, 1, "never retried");
  await shot(page, "02-wrong-pin");
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByRole("dialog").waitFor({ state: "detached" });
  await page.getByText("user logged in").waitFor();
  assert.equal(await page.getByTestId("audit-badge").getAttribute("data-state"), "unlocked");
  assert.equal((await calls(page, "login")).length, 2);
});

test("generate an ML-DSA-65 key: suggested label, progress, row, attributes, public key", async () => {
  const page = await openApp(browser);
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.getByTestId("generate-key").click();
  await page.getByTestId("preset").selectOption("ml-dsa-65");
  await page.getByTestId("spec-info").waitFor();
  const label = await page.getByTestId("key-label").inputValue();
  assert.match(label, /^release_ml_dsa_65_\d{4}_\d{2}$/, "the seed's purpose_algorithm_date style");
  await page.getByTestId("generate-submit").click();
  await page.getByText(/Generating on the HSM… [0-9.]+ s/).waitFor();
  await page.getByRole("dialog").waitFor({ state: "detached" });
  const row = page.locator(`[data-testid=key-row][data-label="${label}"]`).first();
  await row.waitFor();
  await row.click();
  await page.getByTestId("key-details").waitFor();
  assert.match(await page.getByTestId("key-details").innerText(), /CKA_PARAMETER_SET/);
  await page.getByTestId("export-pem").click();
  assert.match(await page.getByTestId("pem-text").inputValue(), /BEGIN PUBLIC KEY/);
  const gen = (await calls(page, "generate_key"))[0].args;
  assert.deepEqual(gen.request, {
    spec: { kind: "ml-dsa", set: "ML-DSA-65" },
    label,
    token: true,
    extractable: false,
    always_authenticate: false,
  });
  await shot(page, "03-keys-after-generate");
});

test("typing in a dialog keeps the focus while the window updates behind it", async () => {
  const page = await openApp(browser);
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.getByTestId("generate-key").click();
  await page.getByTestId("spec-info").waitFor();
  const field = page.getByTestId("key-label");
  await field.fill("");
  await field.focus();
  await page.keyboard.type("e2e");
  // Events re-render the views behind the dialog (an e2e run lost its label this way).
  for (const kind of ["audit_changed", "audit_changed"]) {
    await page.evaluate((k) => window.__mock.event({ kind: k }), kind);
    await page.waitForTimeout(50);
    await page.keyboard.type("_x");
  }
  assert.equal(await field.inputValue(), "e2e_x_x");
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "key-label");
  await page.keyboard.press("Escape");
  await page.getByRole("dialog").waitFor({ state: "detached" });
});

test("HSS presets show the signature count and the key-generation warning", async () => {
  const page = await openApp(browser);
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.getByTestId("generate-key").click();
  await page.getByTestId("preset").selectOption("hss");
  await page.getByTestId("hss-capacity").waitFor();
  assert.match(await page.getByTestId("hss-capacity").innerText(), /1,024/);
  await page.getByLabel("Level 1 LMS type").selectOption("LMS_SHA256_M32_H15");
  await page.getByText(/H15 tree takes about 90 seconds on a Luna HSM/).waitFor();
  assert.match(await page.getByTestId("hss-capacity").innerText(), /1,048,576/);
  await shot(page, "04-generate-hss");
  await page.keyboard.press("Escape");
  await page.getByRole("dialog").waitFor({ state: "detached" });
});

test("deleting needs the label typed; the deletion is in the audit view", async () => {
  const page = await openApp(browser, { objects: 3 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  const row = page.locator("[data-testid=key-row][data-label=bulk_key_00000]");
  await row.click();
  await page.getByTestId("delete-keys").click();
  const submit = page.getByTestId("delete-submit");
  assert.equal(await submit.isDisabled(), true);
  await page.getByTestId("delete-confirm").fill("bulk_key_0000");
  assert.equal(await submit.isDisabled(), true, "a near miss does not enable deletion");
  await page.getByTestId("delete-confirm").fill("bulk_key_00000");
  await submit.click();
  await page.getByRole("dialog").waitFor({ state: "detached" });
  await row.waitFor({ state: "detached" });
  await page.keyboard.press("Alt+9");
  await page.locator("[data-testid=audit-row][data-action='key.destroy']").waitFor();
  await shot(page, "05-audit-after-delete");
});

test("10,000 objects: the table renders a window of rows, scrolls, searches", async () => {
  const page = await openApp(browser, { objects: 10000 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.getByText("(10000)").waitFor();
  const rendered = await page.getByTestId("key-row").count();
  assert.ok(rendered > 10 && rendered < 80, `only visible rows are in the DOM (${rendered})`);
  await page.getByTestId("key-table").focus();
  await page.keyboard.press("End");
  await page.locator("[data-testid=key-row][data-label=bulk_key_09999]").waitFor();
  await page.getByTestId("key-search").fill("bulk_key_0424");
  await page.getByText("(10 of 10000)").waitFor();
  await shot(page, "06-keys-10000");
});

test("a module path that is not PKCS#11 gets a clear message and the window keeps working", async () => {
  const page = await openApp(browser);
  await page.keyboard.press("Alt+1");
  await page.getByTestId("module-path").fill("/usr/lib/x86_64-linux-gnu/libz.so.1");
  await page.getByTestId("module-add").click();
  const alert = page.getByRole("alert").filter({ hasText: "is not a PKCS#11 module" });
  await alert.waitFor();
  assert.match(await alert.innerText(), /What to do: Choose the vendor's PKCS#11 library/);
  await page.getByRole("button", { name: "Partition" }).click();
  await page.getByTestId("mechanism-table").waitFor();
  await page.getByTestId("mechanism-filter").fill("ML_DSA");
  assert.equal(await page.getByTestId("mechanism-table").locator("tbody tr").count(), 2);
  await shot(page, "07-partition");
});

test("verifying the trail shows progress and names a tampered record", async () => {
  const page = await openApp(browser, { records: 400, tamperedSeq: 117 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+9");
  await page.getByTestId("verify-trail").click();
  await page.getByRole("progressbar").waitFor();
  const v = page.getByTestId("verdict");
  await v.waitFor();
  assert.equal(await v.getAttribute("data-verdict"), "broken");
  assert.match(await v.innerText(), /Broken at record 117/);
  const badge = page.getByTestId("verification-badge");
  assert.equal(await badge.getAttribute("data-state"), "broken");
  assert.match(await badge.innerText(), /broken at record 117/);
  await shot(page, "08-audit-broken");
});

test("the header badge goes from not verified to intact, and the schedule is a setting", async () => {
  const page = await openApp(browser, { records: 50 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  const badge = page.getByTestId("verification-badge");
  assert.equal(await badge.getAttribute("data-state"), "never");
  await badge.click();
  await page.getByTestId("verify-trail").click();
  await page.getByTestId("verdict").waitFor();
  await page.locator("[data-testid=verification-badge][data-state=intact]").waitFor();
  assert.match(await badge.innerText(), /trail intact/);
  await page.keyboard.press("Alt+0");
  await page.getByLabel("Verify automatically").selectOption("hourly");
  await page.getByTestId("settings-save").click();
  await page.waitForFunction(() => window.__mock.settings.audit.auto_verify === "hourly");
  await page.locator("[data-testid=verification-badge][title*=hourly]").waitFor();
});

test("a running verification can be cancelled", async () => {
  const page = await openApp(browser, { records: 400 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+9");
  await page.getByTestId("verify-trail").click();
  await page.getByTestId("cancel-verify").click();
  await page.getByText("Verification did not finish").waitFor();
  assert.equal((await calls(page, "cancel_job")).length, 1);
});

test("settings are validated, saved, and the dark theme applies", async () => {
  const page = await openApp(browser, {}, { colorScheme: "light" });
  await page.keyboard.press("Alt+0");
  await page.getByLabel("HSS critical threshold").fill("50");
  await page.getByTestId("settings-save").click();
  await page.getByRole("alert").filter({ hasText: "must not exceed" }).waitFor();
  await page.getByLabel("HSS critical threshold").fill("1");
  await page.getByTestId("theme").selectOption("dark");
  await page.getByTestId("settings-save").click();
  await page.getByText("Settings saved.").waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, "rgb(20, 23, 28)");
  await page.keyboard.press("Alt+1");
  await shot(page, "09-dark-theme");
});

test("when the console cannot start, the window says why", async () => {
  const page = await openApp(browser, {
    startupError: {
      code: "AUDIT_UNAVAILABLE",
      message: "The audit trail at postgres://audit:***@db/trail cannot be opened.",
      details: "connection refused",
      suggestion: "Check the audit store in the settings.",
      pkcs11: null,
    },
  });
  await page.getByText("HSM Console could not start").waitFor();
  assert.match(await page.getByRole("alert").innerText(), /Check the audit store/);
});

test("files dropped on the window go to Sign; bad ones say why; signing shows progress and outputs", async () => {
  const page = await openApp(browser, { objects: 3 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.evaluate(() =>
    window.__mock.drop(["/srv/release/app-1.0.tar.gz", "/srv/release/", "/srv/release/empty.bin", "/srv/release/app-1.0.iso"]),
  );
  await page.getByTestId("sign-files").waitFor();
  assert.equal(await page.getByTestId("sign-file").count(), 4);
  await page.getByText("is a folder").waitFor();
  await page.getByText("is empty (0 bytes)").waitFor();
  await page.getByTestId("fmt-raw").check();
  assert.match(await page.getByTestId("sign-submit").innerText(), /Sign 2 files/);
  await shot(page, "10-sign-dropped");
  // Stop at the first failure (the default): the bad paths stop the batch before signing.
  await page.getByTestId("sign-submit").click();
  await page.getByTestId("sign-report").waitFor();
  assert.match(await page.getByTestId("sign-report").innerText(), /Stopped at the first failure/);
  await page.getByLabel("Go on with the other files when one fails").check();
  await page.getByTestId("sign-submit").click();
  await page.getByTestId("sign-report").waitFor();
  assert.match(await page.getByTestId("sign-report").innerText(), /verified in software/);
  await page.getByText("/srv/release/app-1.0.iso.p7s").waitFor();
  const req = (await calls(page, "sign_files"))[1].args.request;
  assert.deepEqual(req.files, ["/srv/release/app-1.0.tar.gz", "/srv/release/", "/srv/release/empty.bin", "/srv/release/app-1.0.iso"]);
  assert.deepEqual(req.formats, ["cms", "raw"]);
  assert.equal(req.on_error, "continue");
  assert.equal(await page.getByText("ML-DSA context").count(), 0, "no context field for an ECDSA key");
  await shot(page, "11-sign-report");
  await page.keyboard.press("Alt+9");
  await page.locator("[data-testid=audit-row][data-action='sign']").first().waitFor();
  // From the record to the signed file: the Verify view opens with the file and signature.
  await page.locator("[data-testid=audit-row][data-action='sign']").first().click();
  await page.getByTestId("record-signed-file").click();
  assert.equal(await page.getByTestId("verify-file").inputValue(), "/srv/release/app-1.0.iso");
  assert.equal(await page.getByTestId("verify-sig").inputValue(), "/srv/release/app-1.0.iso.p7s");
});

test("an Ed25519 key: OpenPGP certificate export fixes the fingerprint; OpenPGP and minisign formats", async () => {
  const page = await openApp(browser, { ed25519Key: true, objects: 3 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.locator("[data-testid=key-row][data-label=release_ed25519]", { hasText: "private key" }).click();
  await page.getByTestId("key-formats").waitFor();
  assert.match(await page.getByTestId("openpgp-fingerprint").innerText(), /not fixed yet/);
  assert.equal(await page.getByTestId("export-openpgp").isDisabled(), true, "a user ID is needed");
  await page.getByTestId("openpgp-uid").fill("Release Signing <release@example.org>");
  await page.getByTestId("export-openpgp").click();
  await page.locator("code[data-testid=openpgp-fingerprint]").waitFor();
  const saved = await calls(page, "save_openpgp_certificate");
  assert.equal(saved[0].args.userId, "Release Signing <release@example.org>");
  await page.getByTestId("export-minisign").click();
  await page.getByText("Saved /home/officer/minisign.pub.").waitFor();
  await shot(page, "12b-key-openpgp");

  await page.evaluate(() => window.__mock.drop(["/srv/release/app-2.0.tar.gz"]));
  await page.getByTestId("sign-key").selectOption({ label: "release_ed25519 — Ed25519" });
  await page.getByTestId("fmt-cms").uncheck();
  await page.getByTestId("fmt-openpgp").check();
  await page.getByTestId("fmt-openpgp-binary").check();
  await page.getByTestId("fmt-minisign").check();
  await page.getByTestId("sign-submit").click();
  await page.getByTestId("sign-report").waitFor();
  await page.getByText("/srv/release/app-2.0.tar.gz.gpg").waitFor();
  await page.getByText("/srv/release/app-2.0.tar.gz.minisig").waitFor();
  assert.deepEqual((await calls(page, "sign_files"))[0].args.request.formats, ["openpgp_binary", "minisign"]);
  // An ECDSA key: OpenPGP yes, minisign no (and the choice is dropped).
  await page.getByTestId("sign-key").selectOption({ label: "bulk_key_00001 — ECDSA P-256" });
  assert.equal(await page.getByTestId("fmt-minisign").isDisabled(), true);
  assert.equal(await page.getByTestId("fmt-minisign").isChecked(), false);
  assert.equal(await page.getByTestId("fmt-openpgp").isDisabled(), false);
});

test("an HSS key needs confirmation, and a batch larger than what is left is refused", async () => {
  const page = await openApp(browser, { hssRemaining: 5 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.evaluate(() => window.__mock.drop(["/fw/a.bin", "/fw/b.bin", "/fw/c.bin"]));
  await page.getByTestId("sign-key").selectOption({ label: "fw_hss_2026_11 — HSS — 5 of 1,024 signatures left" });
  await page.getByTestId("fmt-raw").check();
  await page.getByText("There are not enough left").waitFor();
  assert.equal(await page.getByTestId("sign-submit").isDisabled(), true);
  await page.getByTestId("fmt-raw").uncheck();
  assert.match(await page.getByTestId("hss-notice").innerText(), /uses 4 one-time signatures/);
  assert.equal(await page.getByTestId("sign-submit").isDisabled(), true, "not before the officer confirms");
  await page.getByTestId("confirm-hss").check();
  await page.getByTestId("sign-submit").click();
  await page.getByTestId("sign-report").waitFor();
  assert.match(await page.getByTestId("sign-report").innerText(), /2 HSS signatures left/);
  assert.equal((await calls(page, "sign_files"))[0].args.request.confirm_hss, true);
  await shot(page, "12-sign-hss");
});

test("the verify view gives a verdict and says why a tampered file fails", async () => {
  const page = await openApp(browser);
  await page.keyboard.press("Alt+5");
  await page.getByTestId("verify-file").fill("/srv/release/app-1.0.tar.gz");
  await page.getByTestId("verify-sig").fill("/srv/release/app-1.0.tar.gz.p7s");
  await page.getByTestId("verify-submit").click();
  assert.equal(await page.getByTestId("verify-report").getAttribute("data-valid"), "true");
  await page.getByTestId("verify-file").fill("/srv/release/tampered.tar.gz");
  await page.getByTestId("verify-submit").click();
  await page.locator("[data-testid=verify-report][data-valid=false]").waitFor();
  assert.match(await page.getByTestId("verify-report").innerText(), /not the one that was signed/);
  await shot(page, "13-verify");
  await page.getByTestId("verify-file").fill("/srv/release/stamped.tar.gz");
  await page.getByTestId("verify-submit").click();
  await page.getByTestId("verify-timestamp").waitFor();
  assert.match(await page.getByTestId("verify-timestamp").innerText(), /2026-11-30T12:00:01Z/);
  assert.match(await page.getByTestId("verify-tsa").innerText(), /Example TSA/);
});

test("settings take a timestamp authority and refuse a URL that is not HTTP(S)", async () => {
  const page = await openApp(browser);
  await page.keyboard.press("Alt+0");
  await page.getByTestId("tsa-enabled").check();
  await page.getByTestId("tsa-url").fill("ftp://tsa.example/");
  await page.getByTestId("settings-save").click();
  await page.getByText("is not an http:// or https:// URL").waitFor();
  assert.equal(await page.evaluate(() => window.__mock.settings.timestamp.enabled), false);
  await page.getByTestId("tsa-url").fill("http://tsa.example/ts");
  await page.getByLabel("Timestamp authority timeout").fill("20");
  await page.getByTestId("settings-save").click();
  await page.waitForFunction(() => window.__mock.settings.timestamp.url === "http://tsa.example/ts");
  assert.equal(await page.evaluate(() => window.__mock.settings.timestamp.timeout_seconds), 20);
  assert.equal(await page.evaluate(() => window.__mock.settings.timestamp.enabled), true);
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.evaluate(() => window.__mock.drop(["/srv/release/app-1.0.tar.gz"]));
  await page.getByTestId("sign-files").waitFor();
  await page.getByTestId("sign-tsa").waitFor();
  assert.match(await page.getByTestId("sign-tsa").innerText(), /http:\/\/tsa\.example\/ts/);
});

test("the HSS view shows what is left, the burn rate, and a counter mismatch loudly", async () => {
  const page = await openApp(browser, {
    hssRemaining: 40,
    hssMismatch: { now: 40, expected: 42 },
  });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+6");
  const row = page.locator("[data-testid=hss-row][data-label=fw_hss_2026_11]");
  await row.waitFor();
  const text = await row.innerText();
  assert.match(text, /40 of 1,024/);
  assert.match(text, /2027-03-01/);
  assert.match(text, /critical|warning/);
  assert.match(await page.getByTestId("hss-mismatch").innerText(), /2 were made outside this console/);
  await shot(page, "14-hss");
});

test("statistics poll, show the Luna figures and charts, and pause", async () => {
  // Opened on the Statistics view: the Overview would have sampled the partition already.
  const page = await openApp(browser, {}, { view: "stats" });
  await page.keyboard.press("Alt+7");
  await page.getByTestId("stats-luna").waitFor();
  await page.getByText("measuring (two samples").waitFor();
  await page.getByRole("button", { name: "Sample now" }).click();
  await page.getByTestId("busy").filter({ hasText: "40.0 %" }).waitFor();
  assert.match(await page.getByTestId("utilization").innerText(), /sign\s+14\s+1\.40/);
  await page.getByTestId("chart-load").waitFor();
  await shot(page, "15-statistics");
  await page.getByTestId("stats-pause").click();
  const before = (await calls(page, "stats")).length;
  await page.waitForTimeout(1500);
  assert.equal((await calls(page, "stats")).length, before, "no polling while paused");
});

test("a probe sweep shows live progress, the percentiles, the verdict, capacity and the comparison", async () => {
  const page = await openApp(browser);
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+8");
  await page.getByTestId("probe-op").selectOption("ml-dsa-65-sign");
  assert.equal(
    await page.locator("option[value='slh-dsa-sha2-128f-sign']").isDisabled(),
    true,
    "what the partition lacks is not selectable",
  );
  await page.getByTestId("probe-workers").fill("1,2,4");
  await page.getByTestId("probe-run").click();
  await page.getByRole("progressbar").waitFor();
  await page.getByTestId("probe-live").waitFor();
  await page.getByTestId("probe-report").waitFor();
  assert.match(await page.getByTestId("probe-verdict").innerText(), /Ceiling in the HSM at about 66 ops\/s/);
  assert.equal(await page.getByTestId("probe-runs").locator("tbody tr").count(), 3);
  // The console's own CPU per run: the mock's 3 % per worker, in the last column.
  const cpuCells = page.getByTestId("probe-runs").locator("tbody tr td:last-child");
  assert.deepEqual(await cpuCells.allInnerTexts(), ["3 %", "6 %", "12 %"]);
  assert.match(await page.getByTestId("probe-runs").locator("thead th").last().innerText(), /Console CPU/);
  const req = (await calls(page, "run_probe"))[0].args.request;
  assert.deepEqual(req.sweep, [1, 2, 4]);
  assert.equal(req.mode.mode, "duration");
  assert.equal(req.profile, "pool", "calls go through the pool unless asked otherwise");
  await page.getByTestId("capacity-target").fill("200");
  await page.getByTestId("capacity-plan").click();
  assert.match(
    await page.getByTestId("capacity-result").innerText(),
    /^4 HSMs \(each kept at ≤ 80 % of its 66 ops\/s ceiling\), then 1 session per HSM for 50 ops\/s at [\d.]+ ms per call\./,
  );
  await shot(page, "16-probe-sweep");
  // A second run, then compare the two stored runs side by side.
  await page.getByTestId("probe-workers").fill("1");
  // The second run as an application often calls: finding the key every time.
  await page.getByTestId("probe-profile").selectOption("find-per-call");
  await page.getByTestId("probe-run").click();
  await page.locator("[data-testid=probe-history] tbody tr").nth(1).waitFor();
  assert.equal((await calls(page, "run_probe"))[1].args.request.profile, "find-per-call");
  for (const box of await page.locator("[data-testid=probe-history] input[type=checkbox]").all()) await box.check();
  await page.getByTestId("probe-compare").waitFor();
  assert.match(await page.getByTestId("probe-compare").innerText(), /ops\/s/);
});

for (const kind of [
  "modified",
  "missing",
  "inserted",
  "reordered",
  "grafted",
  "truncated_tail",
  "rollback",
  "checkpoint_signature_invalid",
  "torn_last_write",
]) {
  test(`a broken trail (${kind}) is named, explained and the record highlighted`, async () => {
    const page = await openApp(browser, { records: 300, tamperedSeq: 150, tamperKind: kind });
    await login(page);
    await page.getByText("user logged in").waitFor();
    await page.keyboard.press("Alt+9");
    await page.getByTestId("verify-trail").click();
    const v = page.getByTestId("verdict");
    await v.waitFor();
    assert.equal(await v.getAttribute("data-verdict"), "broken");
    const text = await v.innerText();
    assert.match(text, /Broken at record 150/);
    assert.match(text, new RegExp(`finding: ${kind}`));
    if (kind === "torn_last_write") assert.match(text, /crash, not tampering/);
    await page.locator("[data-testid=audit-row][data-bad=true]").waitFor();
    assert.equal(await page.locator("[data-testid=audit-row][data-bad=true]").getAttribute("data-seq"), "150");
    await page.getByTestId("last-verification").filter({ hasText: "broken at 150" }).waitFor();
    if (kind === "modified") await shot(page, "17-audit-broken-highlighted");
  });
}

test("record details, jumping between a key and its records, checkpoints and rotation", async () => {
  const page = await openApp(browser, { objects: 3 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.locator("[data-testid=key-row][data-label=bulk_key_00001]").click();
  await page.getByTestId("export-pem").click();
  await page.getByTestId("key-audit-records").click();
  await page.locator("[data-testid=audit-row][data-action='key.export_public']").waitFor();
  await page.locator("[data-testid=audit-row][data-action='key.export_public']").click();
  const detail = page.getByTestId("record-detail");
  await detail.waitFor();
  assert.match(await detail.innerText(), /Chain value/);
  const cps = page.getByTestId("checkpoints");
  assert.match(await cps.innerText(), /not the HSM's key/);
  assert.match(await cps.innerText(), /signature invalid/);
  await page.getByTestId("rotate-key").click();
  await page.getByTestId("rotate-confirm").click();
  await page.getByText("key epoch 1").waitFor();
  await shot(page, "18-audit-detail");
});

test("filters by actor, time range and status; export takes the date range", async () => {
  const page = await openApp(browser, { records: 300 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+9");
  await page.getByLabel("Actor").fill("ops@ci");
  await page.getByLabel("From date").fill("2026-11-29");
  await page.getByLabel("To date").fill("2026-11-29");
  // Seeded: one record every 10 minutes from 2026-11-28, so the 29th is seq 144–287.
  const first = page.locator("[data-testid=audit-row]").first();
  await page.waitForFunction(() => {
    const r = document.querySelector("[data-testid=audit-row]");
    return r && Number(r.getAttribute("data-seq")) <= 287;
  });
  const seq = Number(await first.getAttribute("data-seq"));
  assert.ok(seq >= 144 && seq <= 287, `first row ${seq}`);
  assert.match(await first.innerText(), /ops@ci/);
  const q = (await calls(page, "audit_records")).at(-1).args.query;
  assert.equal(q.actor, "ops@ci");
  assert.equal(q.from_time, "2026-11-29T00:00:00.000Z");
  assert.equal(q.to_time, "2026-11-29T23:59:59.999Z");
  await page.getByTestId("export-jsonl").click();
  await page.getByText(/Exported 144 records/).waitFor();
  const ex = (await calls(page, "audit_export")).at(-1).args;
  assert.equal(ex.format, "jsonl");
  assert.deepEqual(ex.range, { from_time: "2026-11-29T00:00:00.000Z", to_time: "2026-11-29T23:59:59.999Z" });
  await page.getByTestId("export-csv").click();
  assert.equal((await calls(page, "audit_export")).at(-1).args.format, "csv");
  await page.getByLabel("Status").selectOption("failure");
  await page.getByText("Nothing matches the filters.").waitFor();
});

test("100,000 records: the table renders a window of rows and pages in as it scrolls", async () => {
  const page = await openApp(browser, { records: 100_000 });
  await page.keyboard.press("Alt+9");
  const grid = page.getByTestId("audit-records");
  await page.locator("[data-testid=audit-row][data-seq='100000']").waitFor();
  for (let i = 0; i < 12; i++) {
    await grid.evaluate((el) => {
      const s = el.querySelector(".record-scroll");
      s.scrollTop = s.scrollHeight;
    });
    await page.waitForTimeout(120);
  }
  const seqs = await page.locator("[data-testid=audit-row]").evaluateAll((rows) => rows.map((r) => Number(r.getAttribute("data-seq"))));
  assert.ok(seqs.length < 100, `${seqs.length} rows in the DOM`);
  assert.ok(Math.min(...seqs) < 100_000 - 1000, `scrolled down to ${Math.min(...seqs)}`);
  assert.deepEqual(page.errors, []);
});
