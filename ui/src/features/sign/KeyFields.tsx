// The keys that sign: the signing key, and more keys signing the same batch (dual signing).
import { useTranslation } from "react-i18next";
import type { SigningKeyView } from "../../bindings";
import { Field } from "../../components";
import { useFormat } from "../../i18n";
import { keyRef, type SignFormProps } from "./request";

export function KeyFields({ request, update, signers, busy, keys }: SignFormProps & { keys: SigningKeyView[] | null }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const toggleAlso = (id: string) =>
    update((r) => ({ also_keys: r.also_keys.includes(id) ? r.also_keys.filter((x) => x !== id) : [...r.also_keys, id] }));
  return (
    <>
      <Field label={t("sign.signing_key")} hint={keys && keys.length === 0 ? t("sign.no_key") : undefined}>
        <select
          value={request.key}
          onChange={(e) => update({ key: e.target.value })}
          disabled={busy}
          data-testid="sign-key"
          aria-label={t("sign.signing_key")}
        >
          {(keys ?? []).map((k) => (
            <option key={k.id_hex} value={keyRef(k)}>
              {`${k.label} — ${k.algorithm}`}
              {k.hss_remaining !== null
                ? ` — ${t("sign.key_left", { left: fmt.number(k.hss_remaining), total: fmt.number(Number(k.hss_capacity ?? 0)) })}`
                : ""}
            </option>
          ))}
        </select>
      </Field>
      {keys && keys.length > 1 && (
        <Field label={t("sign.also_sign_with")} hint={t("sign.also_hint")}>
          <div className="inline-form">
            {signers.also.map((k) => (
              <span key={k.id_hex} className="small" data-testid="also-key">
                {`${k.label} — ${k.algorithm}`}{" "}
                <button onClick={() => toggleAlso(keyRef(k))} disabled={busy} aria-label={t("sign.also_remove", { label: k.label })}>
                  ×
                </button>
              </span>
            ))}
            <select
              value=""
              onChange={(e) => e.target.value && toggleAlso(e.target.value)}
              disabled={busy}
              data-testid="sign-also"
              aria-label={t("sign.also_sign_with")}
            >
              <option value="">{t("sign.also_pick")}</option>
              {keys
                .filter((k) => keyRef(k) !== request.key && !request.also_keys.includes(keyRef(k)))
                .map((k) => (
                  <option key={k.id_hex} value={keyRef(k)}>{`${k.label} — ${k.algorithm}`}</option>
                ))}
            </select>
          </div>
        </Field>
      )}
    </>
  );
}
