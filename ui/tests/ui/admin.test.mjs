// Partition administration in the UI (mock backend): the PIN a token wants changed is
// offered at once after login, a new PIN is checked before it is sent, roles show in the
// header and what they may not do is disabled with the reason, initializing needs the
// label typed.
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

test("a PIN flagged to be changed: the change is offered at once, checked, then the trail opens", async () => {
  const page = await openApp(browser, { pinToBeChanged: true });
  await page.getByRole("button", { name: "Connections" }).click();
  await page.getByTestId("login-button").click();
  // Luna roles are offered on the Luna-family built-in module.
  await page.getByTestId("role-crypto_user").waitFor();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByTestId("pin-must-change").waitFor();
  assert.match(await page.getByTestId("pin-must-change").innerText(), /policy 21/);
  await page.getByTestId("old-pin").fill("12345678");
  await page.getByTestId("new-pin").fill("abc");
  await page.getByTestId("new-pin-again").fill("abc");
  assert.match(await page.getByTestId("pin-problem").innerText(), /at least 4/);
  assert.equal(await page.getByTestId("change-pin-submit").isDisabled(), true, "a PIN out of range is not sent");
  await page.getByTestId("new-pin").fill("new-officer-1");
  await page.getByTestId("new-pin-again").fill("new-officer-2");
  assert.match(await page.getByTestId("pin-problem").innerText(), /differ/);
  await page.getByTestId("new-pin-again").fill("new-officer-1");
  await shot(page, "admin-01-pin-must-change");
  await page.getByTestId("change-pin-submit").click();
  await page.getByRole("dialog").waitFor({ state: "detached" });
  assert.equal((await calls(page, "change_pin")).length, 1);
  await page.getByText("PIN changed").first().waitFor();
  assert.equal(await page.getByTestId("audit-badge").getAttribute("data-state"), "unlocked");
  assert.deepEqual(page.errors, []);
});

test("a wrong current PIN is tried once and the dialog says what is left", async () => {
  const page = await openApp(browser);
  await login(page);
  await page.getByRole("dialog").waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Partition", exact: true }).click();
  await page.getByTestId("change-pin").click();
  await page.getByTestId("old-pin").fill("wrong");
  await page.getByTestId("new-pin").fill("new-officer-1");
  await page.getByTestId("new-pin-again").fill("new-officer-1");
  await page.getByTestId("change-pin-submit").click();
  const box = page.getByRole("dialog").getByRole("alert");
  await box.waitFor();
  assert.match(await box.innerText(), /incorrect.*not changed/s);
  assert.match(await box.innerText(), /fewer attempts remain/);
  assert.equal(await page.getByTestId("old-pin").inputValue(), "", "PIN fields are cleared after the call");
  assert.equal((await calls(page, "change_pin")).length, 1, "never retried");
});

test("the Crypto User is shown in the header; what it may not do is disabled with the reason", async () => {
  const page = await openApp(browser);
  await login(page);
  await page.getByRole("dialog").waitFor({ state: "detached" });
  // The Crypto Officer sets the Crypto User's PIN.
  await page.getByRole("button", { name: "Partition", exact: true }).click();
  await page.getByTestId("set-cu-pin").click();
  await page.getByTestId("new-pin").fill("24682468");
  await page.getByTestId("new-pin-again").fill("24682468");
  await page.getByTestId("set-pin-submit").click();
  await page.getByRole("dialog").waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Connections" }).click();
  await page.getByRole("button", { name: "Log out" }).click();
  await page.getByTestId("login-button").click();
  await page.getByTestId("role-crypto_user").check();
  await page.getByTestId("pin-input").fill("24682468");
  await page.getByTestId("login-submit").click();
  await page.getByRole("dialog").waitFor({ state: "detached" });
  await page.getByText("Crypto User logged in").waitFor();
  assert.equal(await page.getByTestId("current-role").getAttribute("data-role"), "crypto_user");
  await page.getByRole("button", { name: "Keys", exact: true }).click();
  assert.equal(await page.getByTestId("generate-key").isDisabled(), true);
  assert.match(await page.getByTestId("generate-key").getAttribute("title"), /Crypto User/);
  assert.match(await page.getByTestId("role-notice").innerText(), /Crypto Officer/);
  await page.getByRole("button", { name: "Partition", exact: true }).click();
  assert.equal(await page.getByTestId("set-user-pin").isDisabled(), true);
  assert.match(await page.getByTestId("credentials-card").innerText(), /only the security officer/i);
  await shot(page, "admin-02-crypto-user");
  assert.deepEqual(page.errors, []);
});

test("initializing the token shows what it holds and needs the label typed and the audit key confirmed", async () => {
  const page = await openApp(browser);
  await login(page);
  await page.getByRole("dialog").waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Partition", exact: true }).click();
  await page.getByTestId("init-token").click();
  await page.getByTestId("token-object-count").waitFor();
  await page.getByLabel("SO PIN").fill("87654321");
  await page.getByLabel("New label").fill("fresh");
  await page.getByTestId("init-confirm").fill("Built-in lunasim");
  await page.getByTestId("audit-key-warning").waitFor();
  assert.equal(await page.getByTestId("init-token-submit").isDisabled(), true, "the trail's key needs its own confirmation");
  await page.getByTestId("destroy-audit-key").check();
  await shot(page, "admin-03-init-token");
  await page.getByTestId("init-token-submit").click();
  await page.getByRole("dialog").waitFor({ state: "detached" });
  const c = await calls(page, "init_token");
  assert.equal(c.length, 1);
  assert.equal(c[0].args.request.destroy_audit_key, true);
  assert.deepEqual(page.errors, []);
});

test("CSR → CA → certificate: the issued certificate is imported next to its key and shown with its chain", async () => {
  const page = await openApp(browser, { objects: 3 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.locator("[data-testid=key-row][data-label=bulk_key_00001]").click();
  await page.getByRole("button", { name: "Certificate…", exact: true }).click();
  await page.getByTestId("import-issued").click();
  // Not a certificate: refused by the file's name, nothing added.
  await page.getByTestId("import-path").fill("/home/officer/not-a-cert.txt");
  await page.getByTestId("import-run").click();
  const alert = page.getByRole("dialog").getByRole("alert");
  await alert.waitFor();
  assert.match(await alert.innerText(), /not-a-cert\.txt: is not a certificate/);
  // The path typed into the field, as from the file dialog's path field.
  await page.getByTestId("import-path").fill("/home/officer/issued-for-bulk_key_00001.pem");
  await page.keyboard.press("Tab");
  await page.getByTestId("import-run").click();
  await page.getByTestId("import-result").waitFor();
  assert.match(await page.getByTestId("import-result").innerText(), /the certificate of key “bulk_key_00001”/);
  assert.equal((await calls(page, "import_objects")).length, 2);
  await shot(page, "admin-05-certificate-imported");
  await page.keyboard.press("Escape");
  await page.keyboard.press("Escape");
  await page.getByRole("dialog").first().waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Refresh" }).click();
  await page.locator("[data-testid=key-row][data-label=bulk_key_00001]").last().click();
  await page.getByTestId("certificate-details").waitFor();
  assert.match(await page.getByTestId("cert-validity").innerText(), /expires in \d+ days/);
  assert.match(await page.getByTestId("cert-chain").innerText(), /Example Intermediate CA/);
  assert.deepEqual(page.errors, []);
});

test("editing a label: only what may change is offered, the new label shows in the table", async () => {
  const page = await openApp(browser, { objects: 3 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.locator("[data-testid=key-row][data-label=bulk_key_00001]").click();
  await page.getByTestId("edit-attributes").click();
  assert.equal(await page.getByTestId("attr-flag-sensitive").isDisabled(), true, "sensitive can never be unset");
  assert.equal(await page.getByTestId("attr-flag-sign").isDisabled(), false);
  await page.getByTestId("attr-label").fill("release_renamed");
  await page.getByTestId("attr-save").click();
  await page.getByRole("dialog").waitFor({ state: "detached" });
  await page.locator("[data-testid=key-row][data-label=release_renamed]").waitFor();
  const [call] = await calls(page, "set_attributes");
  assert.equal(call.args.changes.label, "release_renamed");
  assert.equal(call.args.changes.id_hex, null, "unchanged fields are not sent");
  assert.deepEqual(page.errors, []);
});

test("a key's PKCS#11 URI is shown and copied; 'Use this key from…' gives the command lines", async () => {
  const page = await openApp(browser, { objects: 3 });
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.locator("[data-testid=key-row][data-label=bulk_key_00001]").click();
  const uri = await page.getByTestId("object-uri").innerText();
  assert.match(uri, /^pkcs11:token=Built-in%20lunasim;.*object=bulk_key_00001;id=(%00)+%01;type=private$/);
  await page.getByTestId("copy-uri").click();
  await page.getByText("Copied.").first().waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), uri);
  await page.getByTestId("use-key-from").locator("summary").click();
  assert.match(await page.getByTestId("use-key-from").innerText(), /-engine pkcs11 -keyform engine -passin file:PIN-FILE -sign 'pkcs11:/);
  // Beside the line, why it will not work on this token (the trail's ML-DSA key).
  assert.match(await page.getByTestId("tool-caveat").innerText(), /libp11 .* ML-DSA-65/);
  assert.deepEqual(page.errors, []);
});

test("Test this line: the tool's own verdict beside the line, ok or failed, by keyboard; 中文 too", async () => {
  const page = await openApp(browser, { objects: 3 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.locator("[data-testid=key-row][data-label=bulk_key_00001]").click();
  await page.getByTestId("use-key-from").locator("summary").click();
  assert.match(await page.getByTestId("use-key-from").innerText(), /without a line break/);
  const engine = page.locator("[data-testid=tool-line][data-tool='OpenSSL 3 (pkcs11 engine)']");
  assert.match(await engine.innerText(), /then check what it made:\s*openssl dgst -sha256 -verify PUBLIC\.pem/);
  // From the keyboard: focus the button, press Enter.
  await engine.getByTestId("test-line").focus();
  await page.keyboard.press("Enter");
  const failed = engine.getByTestId("trial-verdict");
  await failed.waitFor();
  assert.equal(await failed.getAttribute("data-ok"), "false");
  assert.match(await failed.innerText(), /It failed; the tool says:[\s\S]*exit status 1[\s\S]*Unable to enumerate private keys/);
  const p11tool = page.locator("[data-testid=tool-line][data-tool=p11tool]");
  await p11tool.getByTestId("test-line").click();
  const ok = p11tool.getByTestId("trial-verdict");
  await ok.waitFor();
  assert.equal(await ok.getAttribute("data-ok"), "true");
  assert.match(await ok.innerText(), /It works[\s\S]*Label: bulk_key_00001/);
  const sent = await calls(page, "try_tool_line");
  assert.deepEqual(
    sent.map((c) => c.args.tool),
    ["OpenSSL 3 (pkcs11 engine)", "p11tool"],
  );
  assert.ok(
    sent.every((c) => !("pin" in c.args)),
    "the PIN never travels from the window",
  );
  await shot(page, "admin-uri-test-this-line");
  assert.deepEqual(page.errors, []);

  const zh = await openApp(browser, { objects: 3 }, { locale: "zh-TW" });
  await zh.keyboard.press("Alt+1");
  await zh.getByTestId("login-button").click();
  await zh.getByTestId("pin-input").fill("12345678");
  await zh.getByTestId("login-submit").click();
  await zh.getByText("使用者已登入").first().waitFor();
  await zh.keyboard.press("Alt+3");
  await zh.locator("[data-testid=key-row][data-label=bulk_key_00001]").click();
  await zh.getByTestId("use-key-from").locator("summary").click();
  const line = zh.locator("[data-testid=tool-line][data-tool=p11tool]");
  await line.getByRole("button", { name: "測試此指令列" }).click();
  await line.getByTestId("trial-verdict").waitFor();
  assert.match(await line.getByTestId("trial-verdict").innerText(), /可用：[\s\S]*結束狀態 0/);
  assert.deepEqual(zh.errors, []);
});

test("a wrap file is unwrapped from the Keys view: a bad file is named, a good one lands in the list", async () => {
  const page = await openApp(browser, { objects: 3 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.getByTestId("unwrap-key").click();
  const run = page.getByTestId("unwrap-run");
  assert.equal(await run.isDisabled(), true, "nothing to unwrap yet");
  await page.getByTestId("unwrap-path").fill("/tmp/release.txt");
  await page.getByTestId("unwrap-with").selectOption({ label: "bulk_key_00000 (secret key, AES-256)" });
  await run.click();
  await page.getByText("/tmp/release.txt: is not a wrap file").waitFor();
  await page.getByTestId("unwrap-path").fill("/tmp/release.wrapped.json");
  await page.getByLabel("Label").last().fill("restored_data_key");
  await run.click();
  await page.getByText("Unwrapped restored_data_key (KCV 1A2B3C).").waitFor();
  await page.locator("[data-testid=key-row][data-label=restored_data_key]").waitFor();
  const sent = await calls(page, "unwrap_key");
  assert.equal(sent.length, 2);
  assert.equal(sent[1].args.path, "/tmp/release.wrapped.json");
  assert.equal(sent[1].args.label, "restored_data_key");
  assert.deepEqual(page.errors, []);
});

test("an AES key shows its KCV; wrapping a non-extractable key is refused with the reason", async () => {
  const page = await openApp(browser, { objects: 3 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.locator("[data-testid=key-row][data-label=bulk_key_00000]").click();
  assert.equal(await page.getByTestId("kcv").innerText(), "1A2B3C");
  await page.getByTestId("wrap-key").click();
  assert.match(await page.getByTestId("wrap-refusal").innerText(), /not extractable/);
  assert.equal((await calls(page, "wrap_key")).length, 0, "nothing sent");
  assert.deepEqual(page.errors, []);
});

test("a role refusal reads in the officer's language, the action inside it too", async () => {
  const page = await openApp(browser, {}, { locale: "zh-CN", view: "keys" });
  const generate = page.getByTestId("generate-key");
  await generate.waitFor();
  assert.equal(await generate.isDisabled(), true);
  // roles.log_in_first_to with roles.actions.generate_keys nested, both from zh-Hans.json.
  assert.equal(await generate.getAttribute("title"), "请先登录才能生成密钥。");
  assert.deepEqual(page.errors, []);
});
