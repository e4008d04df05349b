// The Sign view's certificate chain files: offered next to the CMS format only, picked with
// the file dialog, carried in the request; a chain the backend refuses is shown in the
// officer's language, naming the file.
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

test("chain files are picked beside the CMS format and carried in the request", async () => {
  const page = await openApp(browser, { objects: 3, pickedFiles: ["/srv/pki/intermediate.pem", "/srv/pki/root.pem"] });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.evaluate(() => window.__mock.drop(["/srv/release/app-2.0.tar.gz"]));
  await page.getByTestId("fmt-cms").check();
  await page.getByTestId("chain-add").click();
  assert.equal(await page.getByTestId("chain-files").innerText(), "2 chain files");
  await page.getByTestId("chain-add").click();
  assert.equal(await page.getByTestId("chain-files").innerText(), "2 chain files", "the same file is listed once");
  await page.getByTestId("sign-submit").click();
  await page.getByTestId("sign-report").waitFor();
  const req = (await calls(page, "sign_files"))[0].args.request;
  assert.deepEqual(req.chain, ["/srv/pki/intermediate.pem", "/srv/pki/root.pem"]);
  await shot(page, "14-sign-chain");

  // Without CMS there is no chain to give.
  await page.getByTestId("fmt-cms").uncheck();
  assert.equal(await page.getByTestId("chain-add").count(), 0);
});

test("a chain the backend refuses is shown naming the file, in 简体中文 too", async () => {
  const page = await openApp(browser, { objects: 3, pickedFiles: ["/srv/pki/unrelated.pem"] }, { locale: "zh-CN" });
  await page.keyboard.press("Alt+1");
  await page.getByTestId("login-button").click();
  await page.getByTestId("pin-input").fill("12345678");
  await page.getByTestId("login-submit").click();
  await page.getByText("用户已登录").first().waitFor();
  await page.evaluate(() => window.__mock.drop(["/srv/release/app-2.0.tar.gz"]));
  await page.getByTestId("fmt-cms").check();
  assert.equal(await page.getByTestId("chain-add").innerText(), "证书链…");
  await page.getByTestId("chain-add").click();
  assert.equal(await page.getByTestId("chain-files").innerText(), "1 个证书链文件");
  await page.getByTestId("sign-submit").click();
  await page.getByText("/srv/pki/unrelated.pem：证书 CN=Unrelated CA 无法链接到签名证书").waitFor();
  await shot(page, "52-sign-chain-refused-zh-Hans");
  assert.equal(await page.getByTestId("sign-report").count(), 0, "nothing reported as signed");
});
