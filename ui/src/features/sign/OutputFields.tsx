// Where the outputs go: beside each file or into a folder; a verifier kit (and the user ID
// of its OpenPGP certificate); an ML-DSA context; whether a failed file stops the batch.
import { useTranslation } from "react-i18next";
import { Field } from "../../components";
import { api } from "../../ipc";
import type { SignFormProps } from "./request";

export function OutputFields({ request, update, signers, busy }: SignFormProps) {
  const { t } = useTranslation();
  const chooseOut = async () => {
    const d = await api.pickFolder(t("sign.pick_folder_title"));
    if (d) update({ out_dir: d });
  };
  // The kit goes into a new folder inside the chosen one: the backend refuses an existing one.
  const chooseKit = async () => {
    const d = await api.pickFolder(t("sign.kit_pick_title"));
    if (d) update((r) => ({ kit: { ...r.kit, dir: `${d.replace(/\/+$/, "")}/verifier-kit` } }));
  };
  return (
    <>
      <Field label={t("sign.outputs")}>
        <div className="inline-form">
          <span>{request.out_dir ?? t("sign.beside_each")}</span>
          <button onClick={() => void chooseOut()} disabled={busy}>
            {t("sign.choose_folder")}
          </button>
          {request.out_dir && <button onClick={() => update({ out_dir: null })}>{t("sign.beside_files")}</button>}
        </div>
      </Field>
      <Field label={t("sign.kit")} hint={t("sign.kit_hint")}>
        <div className="inline-form">
          <span data-testid="kit-dir">{request.kit?.dir ?? t("sign.kit_none")}</span>
          <button onClick={() => void chooseKit()} disabled={busy} data-testid="kit-choose">
            {t("sign.kit_choose")}
          </button>
          {request.kit && <button onClick={() => update({ kit: undefined })}>{t("sign.kit_remove")}</button>}
        </div>
      </Field>
      {request.kit && signers.can.openpgp && (
        <Field label={t("sign.kit_uid")} hint={signers.openpgp ? t("sign.kit_uid_needed") : t("sign.kit_uid_hint")}>
          <input
            type="text"
            value={request.kit?.user_id ?? ""}
            onChange={(e) => update((r) => ({ kit: r.kit && { ...r.kit, user_id: e.target.value } }))}
            disabled={busy}
            aria-label={t("sign.kit_uid")}
            data-testid="kit-uid"
          />
        </Field>
      )}
      {signers.mlDsa && request.formats.some((f) => f !== "cms") && (
        <Field label={t("sign.context")} hint={t("sign.context_hint")}>
          <input
            type="text"
            value={request.context ?? ""}
            onChange={(e) => update({ context: e.target.value || null })}
            disabled={busy}
            aria-label={t("verify.context_label")}
          />
        </Field>
      )}
      <label className="check">
        <input
          type="checkbox"
          checked={request.on_error === "continue"}
          onChange={(e) => update({ on_error: e.target.checked ? "continue" : "stop" })}
          disabled={busy}
          data-testid="continue-on-error"
        />{" "}
        {t("sign.continue_on_error")}
      </label>
    </>
  );
}
