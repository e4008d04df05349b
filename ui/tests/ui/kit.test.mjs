// The Sign view's verifier kit: a folder chosen for it, the OpenPGP user ID asked for when
// the batch has OpenPGP signatures (signing waits until it is given), the request carrying
// the kit, the summary naming it; a refusal shown as the backend words it.
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

test("a verifier kit is asked for in the Sign view and shown in the summary", async () => {
  const page = await openApp(browser, { ed25519Key: true, objects: 3, pickedFolder: "/srv/release/" });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.evaluate(() => window.__mock.drop(["/srv/release/app-2.0.tar.gz"]));
  await page.getByTestId("sign-key").selectOption({ label: "release_ed25519 — Ed25519" });
  await page.getByTestId("fmt-openpgp").check();
  assert.equal(await page.getByTestId("kit-uid").count(), 0, "no user ID field without a kit");
  await page.getByTestId("kit-choose").click();
  assert.equal(await page.getByTestId("kit-dir").innerText(), "/srv/release/verifier-kit");
  assert.equal(await page.getByTestId("sign-submit").isDisabled(), true, "OpenPGP in a kit needs a user ID");
  await page.getByTestId("kit-uid").fill("Release Signing <release@example.org>");
  assert.equal(await page.getByTestId("sign-submit").isDisabled(), false);
  await page.getByTestId("sign-submit").click();
  await page.getByTestId("sign-kit").waitFor();
  assert.match(await page.getByTestId("sign-kit").innerText(), /\/srv\/release\/verifier-kit: 5 files, 2 checks/);
  const req = (await calls(page, "sign_files"))[0].args.request;
  // As it crosses IPC (JSON): fields not given are absent.
  assert.deepEqual(JSON.parse(JSON.stringify(req.kit)), {
    dir: "/srv/release/verifier-kit",
    user_id: "Release Signing <release@example.org>",
  });
  await shot(page, "13-sign-kit");
});

test("a kit refused by the backend is an error that says why, and nothing is reported as written", async () => {
  const page = await openApp(browser, { objects: 3, pickedFolder: "/exists" });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.evaluate(() => window.__mock.drop(["/srv/release/app-1.0.tar.gz"]));
  await page.getByTestId("kit-choose").click();
  assert.equal(await page.getByTestId("kit-dir").innerText(), "/exists/verifier-kit");
  await page.getByTestId("sign-submit").click();
  await page.getByText("already exists").waitFor();
  assert.equal(await page.getByTestId("sign-kit").count(), 0);
});
