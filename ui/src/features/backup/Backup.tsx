// Key backup by wrapping: the KCV of an AES key, and the Wrap dialog (Unwrap: UnwrapDialog.tsx). Only
// extractable keys leave the token; HSS keys never (a copy would reuse one-time keys); Luna
// partitions back up with the Backup HSM instead. A key with CKA_WRAP_WITH_TRUSTED is offered
// only the wrapping keys the security officer marked trusted; any other extractable key could
// be wrapped under any wrapping key, which the officer confirms first.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { KeyDetails, OaepHash, ObjectSummary } from "../../bindings";
import { Dialog, ErrorBox, Field } from "../../components";
import { api } from "../../ipc";
import { usePartition, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { objectClassName } from "../credentials/roles";

export function Kcv({ partitionId, handle }: { partitionId: string; handle: number }) {
  const { t } = useTranslation();
  const { run, data, error } = useCommand(api.keyCheckValue);
  useEffect(() => {
    void run(partitionId, handle);
  }, [run, partitionId, handle]);
  if (error) return null;
  if (!data) return null;
  return (
    <p>
      <span title={t("backup.kcv_title")}>KCV</span> <code data-testid="kcv">{data}</code>
    </p>
  );
}

function canWrapWith(k: ObjectSummary) {
  return (
    (k.class === "SECRET_KEY" && k.key_type === "AES") || (k.key_type === "RSA" && (k.class === "PUBLIC_KEY" || k.class === "PRIVATE_KEY"))
  );
}

export function WrapDialog({ partitionId, details, onClose }: { partitionId: string; details: KeyDetails; onClose: () => void }) {
  const { t } = useTranslation();
  const toast = useToast();
  const { partition } = usePartition();
  const { run: list, data: keys } = useCommand(api.listKeys);
  const [with_, setWith] = useState<number | null>(null);
  const [oaep, setOaep] = useState<OaepHash | "">("");
  const [confirmed, setConfirmed] = useState(false);
  useEffect(() => {
    void list(partitionId);
  }, [list, partitionId]);
  const s = details.summary;
  const isHss = s.algorithm.startsWith("HSS");
  const refusal = isHss ? t("backup.hss_never") : s.extractable !== true ? t("backup.not_extractable") : null;
  const trustedOnly = s.wrap_with_trusted === true;
  const { run, loading, error } = useCommand(async () => {
    if (with_ === null) return;
    const f = await api.wrapKey(
      partitionId,
      s.handle,
      with_,
      `${(s.label || "key").replace(/[^A-Za-z0-9._-]/g, "_")}.wrapped.json`,
      oaep === "" ? null : oaep,
      !trustedOnly && confirmed,
    );
    if (f) {
      toast("ok", t("backup.wrapped", { label: f.label, mechanism: f.mechanism }));
      onClose();
    }
  });
  // A key restricted to trusted wrapping keys: only those (RSA public keys and AES keys the SO
  // marked; an RSA private key's trust is on its public half, listed itself).
  const candidates = (keys ?? []).filter(
    (k) => k.handle !== s.handle && canWrapWith(k) && (!trustedOnly || (k.trusted === true && k.class !== "PRIVATE_KEY")),
  );
  const withRsa = candidates.find((k) => k.handle === with_)?.key_type === "RSA";
  return (
    <Dialog title={t("backup.wrap_title", { label: s.label })} onClose={onClose}>
      {partition?.luna && <div className="notice">{t("backup.luna_backup")}</div>}
      {refusal ? (
        <div className="notice warn" data-testid="wrap-refusal">
          {refusal}
        </div>
      ) : (
        <>
          {trustedOnly ? (
            <div className="notice" data-testid="wrap-trusted-only">
              {candidates.length ? t("backup.trusted_only") : t("backup.trusted_only_none")}
            </div>
          ) : (
            <label className="checkbox notice warn" data-testid="wrap-any-key">
              <input
                type="checkbox"
                checked={confirmed}
                onChange={(e) => setConfirmed(e.target.checked)}
                data-testid="wrap-confirm-untrusted"
              />{" "}
              {t("backup.any_wrapping_key")}
            </label>
          )}
          <Field label={t("backup.wrapping_key")} hint={t("backup.wrapping_key_hint")}>
            <select
              value={with_ ?? ""}
              onChange={(e) => setWith(e.target.value ? Number(e.target.value) : null)}
              aria-label={t("backup.wrapping_key")}
            >
              <option value="">{t("backup.choose")}</option>
              {candidates.map((k) => (
                <option key={k.handle} value={k.handle}>
                  {t("backup.candidate", { label: k.label, class: objectClassName(k.class), algorithm: k.algorithm })}
                  {k.trusted === true ? ` — ${t("keys.flag_trusted")}` : ""}
                </option>
              ))}
            </select>
          </Field>
          {withRsa && (
            <Field label={t("backup.oaep_hash")} hint={t("backup.oaep_hash_hint")}>
              <select value={oaep} onChange={(e) => setOaep(e.target.value as OaepHash | "")} aria-label={t("backup.oaep_hash")}>
                <option value="">{t("backup.oaep_automatic")}</option>
                <option value="sha1">SHA-1</option>
                <option value="sha256">SHA-256</option>
              </select>
            </Field>
          )}
          <div className="button-row">
            <button className="primary" onClick={() => void run()} disabled={loading || with_ === null || (!trustedOnly && !confirmed)}>
              {t("backup.wrap_and_save")}
            </button>
            <button onClick={onClose}>{t("common.cancel")}</button>
          </div>
        </>
      )}
      {error && <ErrorBox error={error} />}
    </Dialog>
  );
}
