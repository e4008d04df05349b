// What the officer confirms before signing: the certificate's warnings for CMS, the one-time
// signatures an HSS key uses (and whether it has enough), the PIN a key wants per signature.
import { useTranslation } from "react-i18next";
import type { SigningKeyView } from "../../bindings";
import { Badge, Field } from "../../components";
import { textOf, useFormat } from "../../i18n";
import { useSettings } from "../../state";
import { hssNeeded, perFileSignatures, type SignFormProps } from "./request";

function hssTone(k: SigningKeyView, warn: number, crit: number): "ok" | "warn" | "bad" {
  if (k.hss_remaining === null || k.hss_capacity === null) return "ok";
  const pct = (100 * k.hss_remaining) / Number(k.hss_capacity);
  return pct <= crit ? "bad" : pct <= warn ? "warn" : "ok";
}

/// Whether an HSS key has fewer one-time signatures left than the batch uses.
export function tooFewLeft(k: SigningKeyView, request: SignFormProps["request"], good: number) {
  return k.hss_remaining !== null && k.hss_remaining < hssNeeded(k, request, good);
}

export function SignNotices({
  request,
  update,
  signers,
  busy,
  good,
  pin,
  setPin,
}: SignFormProps & { good: number; pin: string; setPin: (pin: string) => void }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { settings } = useSettings();
  const { key } = signers;
  const consentPerUse = request.context_login === "once_per_batch";
  const short = (k: SigningKeyView) => tooFewLeft(k, request, good);
  return (
    <>
      {key && request.formats.includes("cms") && key.certificate_warnings_text.length > 0 && (
        <div className="notice warn" data-testid="certificate-warnings">
          {t("sign.cms_certificate_warnings", { subject: key.certificate_subject ?? t("sign.the_keys_certificate") })}{" "}
          {key.certificate_warnings_text.map((w) => (
            <span key={w.key}>{t("sign.sentence", { text: textOf(w) })} </span>
          ))}
        </div>
      )}
      {signers.hss.map((k) => (
        <div key={k.id_hex} className={`notice ${short(k) ? "warn" : ""}`} data-testid="hss-notice">
          {signers.all.length > 1 && <strong>{k.label}: </strong>}
          <Badge tone={hssTone(k, settings?.hss_warning_percent ?? 10, settings?.hss_critical_percent ?? 1)}>
            {t("hss.left_of", {
              left: k.hss_remaining === null ? "?" : fmt.number(k.hss_remaining),
              total: fmt.number(Number(k.hss_capacity ?? 0)),
            })}
          </Badge>{" "}
          {t("sign.hss_uses", { count: hssNeeded(k, request, good) })}
          {short(k) ? ` ${t("sign.hss_not_enough")}` : ""}
          <label className="check">
            <input
              type="checkbox"
              checked={request.confirm_hss}
              onChange={(e) => update({ confirm_hss: e.target.checked })}
              data-testid="confirm-hss"
            />{" "}
            {t("sign.hss_confirm", { count: hssNeeded(k, request, good) })}
          </label>
        </div>
      ))}
      {signers.perUse.map((k) => (
        <div key={k.id_hex} className="notice warn" data-testid="per-use-notice">
          {t("sign.per_use_notice", { label: k.label })}
          <label className="check">
            <input
              type="checkbox"
              checked={consentPerUse}
              onChange={(e) => update({ context_login: e.target.checked ? "once_per_batch" : undefined })}
              disabled={busy}
              data-testid="consent-per-use"
            />{" "}
            {t("sign.per_use_consent", { count: good * perFileSignatures(k, request.formats) })}
          </label>
        </div>
      ))}
      {signers.perUse.length > 0 && (
        <Field label={t("sign.per_use_pin")}>
          <input
            type="password"
            autoComplete="off"
            value={pin}
            onChange={(e) => setPin(e.target.value)}
            disabled={busy || !consentPerUse}
            data-testid="per-use-pin"
          />
        </Field>
      )}
    </>
  );
}
