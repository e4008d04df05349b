// The Sign view's "apt repository" preset: an apt repository's Release signed as apt reads it
// (InRelease and an armored Release.gpg) — the two OpenPGP formats chosen and nothing else,
// the request carrying them, the summary naming InRelease and Release.gpg; offered only for
// a key with an OpenPGP form, and a warning when no file is named Release.
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

test("the apt repository preset signs Release as InRelease and Release.gpg", async () => {
  const page = await openApp(browser, { ed25519Key: true, objects: 3 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.evaluate(() => window.__mock.drop(["/srv/apt/dists/stable/Release"]));
  await page.getByTestId("sign-key").selectOption({ label: "release_ed25519 — Ed25519" });
  await page.getByTestId("fmt-raw").check();
  await page.getByTestId("preset-apt").click();
  for (const [id, checked] of [
    ["fmt-cms", false],
    ["fmt-raw", false],
    ["fmt-openpgp", true],
    ["fmt-openpgp-binary", false],
    ["fmt-openpgp-cleartext", true],
    ["fmt-minisign", false],
  ]) {
    assert.equal(await page.getByTestId(id).isChecked(), checked, id);
  }
  assert.match(await page.getByTestId("apt-note").innerText(), /InRelease and Release\.gpg/);
  await page.getByTestId("sign-submit").click();
  await page.getByTestId("sign-report").waitFor();
  await page.getByText("/srv/apt/dists/stable/InRelease").waitFor();
  await page.getByText("/srv/apt/dists/stable/Release.gpg").waitFor();
  const req = (await calls(page, "sign_files"))[0].args.request;
  assert.deepEqual(req.formats, ["openpgp", "openpgp_cleartext"]);
  assert.equal(req.manifest, false);
  await shot(page, "13b-sign-apt");
});

test("the preset warns without a Release file and needs a key with an OpenPGP form", async () => {
  const page = await openApp(browser, { ed25519Key: true, objects: 3, hssRemaining: 500 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.evaluate(() => window.__mock.drop(["/srv/notes/CHANGES.txt"]));
  await page.getByTestId("sign-key").selectOption({ label: "release_ed25519 — Ed25519" });
  await page.getByTestId("preset-apt").click();
  assert.match(await page.getByTestId("apt-note").innerText(), /No file named Release/);
  // The cleartext alone, for any text file: FILE.clearsigned.
  await page.getByTestId("fmt-openpgp").uncheck();
  assert.equal(await page.getByTestId("apt-note").count(), 0, "no longer the preset");
  await page.getByTestId("sign-submit").click();
  await page.getByText("/srv/notes/CHANGES.txt.clearsigned").waitFor();
  assert.deepEqual((await calls(page, "sign_files"))[0].args.request.formats, ["openpgp_cleartext"]);
  // An HSS key has no OpenPGP form: neither the preset nor the cleartext is offered.
  await page.getByTestId("sign-key").selectOption({ label: "fw_hss_2026_11 — HSS — 500 of 1,024 signatures left" });
  assert.equal(await page.getByTestId("preset-apt").isDisabled(), true);
  assert.equal(await page.getByTestId("fmt-openpgp-cleartext").isDisabled(), true);
  assert.equal(await page.getByTestId("fmt-openpgp-cleartext").isChecked(), false);
});
