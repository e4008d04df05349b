// The formats of the signatures: CMS (with a chain), raw, bundle, OpenPGP, minisign, SSH,
// the manifest, and the apt repository preset.
import { useTranslation } from "react-i18next";
import type { FileCheck, SignFormat } from "../../bindings";
import { api } from "../../ipc";
import { useSettings } from "../../state";
import { useCommand } from "../../useCommand";
import { APT_FORMATS, type SignFormProps } from "./request";

export function FormatFields({ request, update, signers, busy, checks }: SignFormProps & { checks: FileCheck[] }) {
  const { t } = useTranslation();
  const { settings } = useSettings();
  const { chosen, detachedOpenpgp } = signers;
  const toggleFormat = (f: SignFormat) =>
    update((r) => ({ formats: r.formats.includes(f) ? r.formats.filter((x) => x !== f) : [...r.formats, f] }));
  const toggleOpenpgp = () =>
    update((r) => ({
      formats: detachedOpenpgp ? r.formats.filter((f) => f !== "openpgp" && f !== "openpgp_binary") : [...r.formats, "openpgp"],
    }));
  const setOpenpgpBinary = (binary: boolean) =>
    update((r) => ({
      formats: r.formats.map((f) => (f === "openpgp" || f === "openpgp_binary" ? (binary ? "openpgp_binary" : "openpgp") : f)),
    }));
  // An apt repository's Release, signed as apt reads it: InRelease and an armored Release.gpg.
  const aptPreset = chosen.length === APT_FORMATS.length && APT_FORMATS.every((f) => chosen.includes(f));
  const aptWithoutRelease = aptPreset && checks.length > 0 && !checks.some((c) => c.name === "Release");
  // PEM/DER chain files for CMS; the backend reads and checks them before signing.
  const { run: addChain } = useCommand(
    async () => {
      const picked = await api.pickFiles(t("sign.chain_title"), true);
      if (picked.length) update((r) => ({ chain: [...r.chain, ...picked.filter((p) => !r.chain.includes(p))] }));
    },
    { errorToast: t("sign.no_file_dialog") },
  );
  return (
    <>
      <fieldset className="radio-row">
        <legend>{t("sign.formats")}</legend>
        <div className="inline-form preset-row">
          <button
            onClick={() => {
              update({ formats: APT_FORMATS, manifest: false });
            }}
            disabled={busy || !signers.can.openpgp}
            title={signers.can.openpgp ? t("sign.preset_apt_hint") : t("sign.openpgp_needs_key")}
            data-testid="preset-apt"
          >
            {t("sign.preset_apt")}
          </button>
          {aptPreset && (
            <span className={aptWithoutRelease ? "small warn-text" : "small muted"} data-testid="apt-note">
              {aptWithoutRelease ? t("sign.apt_no_release") : t("sign.apt_outputs")}
            </span>
          )}
        </div>
        <label>
          <input
            type="checkbox"
            checked={request.formats.includes("cms")}
            onChange={() => toggleFormat("cms")}
            disabled={busy}
            data-testid="fmt-cms"
          />{" "}
          {t("sign.fmt_cms")}
        </label>
        {request.formats.includes("cms") && signers.also.length === 0 && (
          <span className="inline-form" title={t("sign.chain_hint")}>
            <button onClick={() => void addChain()} disabled={busy} data-testid="chain-add">
              {t("sign.chain")}
            </button>
            {request.chain.length > 0 && (
              <>
                <span className="small" data-testid="chain-files" title={request.chain.join("\n")}>
                  {t("sign.chain_files", { count: request.chain.length })}
                </span>
                <button onClick={() => update({ chain: [] })} disabled={busy} aria-label={t("sign.chain_clear")}>
                  ×
                </button>
              </>
            )}
          </span>
        )}
        <label>
          <input
            type="checkbox"
            checked={request.formats.includes("raw")}
            onChange={() => toggleFormat("raw")}
            disabled={busy}
            data-testid="fmt-raw"
          />{" "}
          {t("sign.fmt_raw")}
        </label>
        <label>
          <input
            type="checkbox"
            checked={request.formats.includes("bundle")}
            onChange={() => toggleFormat("bundle")}
            disabled={busy}
            data-testid="fmt-bundle"
          />{" "}
          {t("sign.fmt_bundle")}
        </label>
        <label title={signers.can.openpgp ? undefined : t("sign.openpgp_needs_key")}>
          <input
            type="checkbox"
            checked={signers.detachedOpenpgp}
            onChange={toggleOpenpgp}
            disabled={busy || !signers.can.openpgp}
            data-testid="fmt-openpgp"
          />{" "}
          {t("sign.fmt_openpgp")}
        </label>
        {signers.detachedOpenpgp && (
          <label>
            <input
              type="checkbox"
              checked={signers.chosen.includes("openpgp_binary")}
              onChange={(e) => setOpenpgpBinary(e.target.checked)}
              disabled={busy}
              data-testid="fmt-openpgp-binary"
            />{" "}
            {t("sign.fmt_openpgp_binary")}
          </label>
        )}
        <label title={signers.can.openpgp ? t("sign.fmt_openpgp_cleartext_hint") : t("sign.openpgp_needs_key")}>
          <input
            type="checkbox"
            checked={signers.chosen.includes("openpgp_cleartext")}
            onChange={() => toggleFormat("openpgp_cleartext")}
            disabled={busy || !signers.can.openpgp}
            data-testid="fmt-openpgp-cleartext"
          />{" "}
          {t("sign.fmt_openpgp_cleartext")}
        </label>
        <label title={signers.can.minisign ? undefined : t("sign.minisign_needs_key")}>
          <input
            type="checkbox"
            checked={signers.chosen.includes("minisign")}
            onChange={() => toggleFormat("minisign")}
            disabled={busy || !signers.can.minisign}
            data-testid="fmt-minisign"
          />{" "}
          {t("sign.fmt_minisign")}
        </label>
        <label title={signers.can.sshsig ? undefined : t("sign.sshsig_needs_key")}>
          <input
            type="checkbox"
            checked={signers.chosen.includes("sshsig")}
            onChange={() => toggleFormat("sshsig")}
            disabled={busy || !signers.can.sshsig}
            data-testid="fmt-sshsig"
          />{" "}
          {t("sign.fmt_sshsig")}
        </label>
        <label>
          <input type="checkbox" checked={request.manifest} onChange={(e) => update({ manifest: e.target.checked })} disabled={busy} />{" "}
          {t("sign.fmt_manifest")}
          {signers.openpgp ? t("sign.fmt_manifest_openpgp") : ""}
        </label>
      </fieldset>
      {settings?.timestamp.enabled && request.formats.some((f) => f === "cms" || f === "bundle") && (
        <p className="muted" data-testid="sign-tsa">
          {t("sign.tsa_note", { url: settings.timestamp.url })}
        </p>
      )}
    </>
  );
}
