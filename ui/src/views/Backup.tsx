// Key backup by wrapping: the KCV of an AES key, and the Wrap / Unwrap dialogs. Only
// extractable keys leave the token; HSS keys never (a copy would reuse one-time keys); Luna
// partitions back up with the Backup HSM instead.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { KeyDetails, ObjectSummary } from "../bindings";
import { Dialog, ErrorBox, Field } from "../components";
import { api } from "../ipc";
import { usePartition, useToast } from "../state";
import { useCommand } from "../useCommand";
import { objectClassName } from "./Credentials";

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
  useEffect(() => {
    void list(partitionId);
  }, [list, partitionId]);
  const s = details.summary;
  const isHss = s.algorithm.startsWith("HSS");
  const refusal = isHss ? t("backup.hss_never") : s.extractable !== true ? t("backup.not_extractable") : null;
  const { run, loading, error } = useCommand(async () => {
    if (with_ === null) return;
    const f = await api.wrapKey(partitionId, s.handle, with_, `${(s.label || "key").replace(/[^A-Za-z0-9._-]/g, "_")}.wrapped.json`);
    if (f) {
      toast("ok", t("backup.wrapped", { label: f.label, mechanism: f.mechanism }));
      onClose();
    }
  });
  const candidates = (keys ?? []).filter((k) => k.handle !== s.handle && canWrapWith(k));
  return (
    <Dialog title={t("backup.wrap_title", { label: s.label })} onClose={onClose}>
      {partition?.luna && <div className="notice">{t("backup.luna_backup")}</div>}
      {refusal ? (
        <div className="notice warn" data-testid="wrap-refusal">
          {refusal}
        </div>
      ) : (
        <>
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
                </option>
              ))}
            </select>
          </Field>
          <div className="button-row">
            <button className="primary" onClick={() => void run()} disabled={loading || with_ === null}>
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
