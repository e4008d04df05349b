// Unwrapping a key from a file under a wrapping key on the token.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { ObjectSummary } from "../../bindings";
import { Dialog, ErrorBox, Field } from "../../components";
import { api } from "../../ipc";
import { useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { objectClassName } from "../credentials/roles";

export function canUnwrapWith(k: ObjectSummary) {
  return (k.class === "SECRET_KEY" && k.key_type === "AES") || (k.key_type === "RSA" && k.class === "PRIVATE_KEY");
}

/** Unwrap a wrap file made by this console (here or on another token) with the matching key. */
export function UnwrapDialog({ partitionId, onClose, onUnwrapped }: { partitionId: string; onClose: () => void; onUnwrapped: () => void }) {
  const { t } = useTranslation();
  const toast = useToast();
  const { run: list, data: keys } = useCommand(api.listKeys);
  const [path, setPath] = useState("");
  const [with_, setWith] = useState<number | null>(null);
  const [label, setLabel] = useState("");
  useEffect(() => {
    void list(partitionId);
  }, [list, partitionId]);
  const { run: pick } = useCommand(
    async () => {
      const [p] = await api.pickFiles(t("backup.choose_wrap_file"), false);
      if (p) setPath(p);
    },
    { errorToast: t("objects.file_dialog_failed") },
  );
  const { run, loading, error } = useCommand(async () => {
    if (with_ === null) return;
    const u = await api.unwrapKey(partitionId, path.trim(), with_, label.trim() || null);
    toast(
      "ok",
      u.kcv ? t("backup.unwrapped_kcv", { label: u.summary.label, kcv: u.kcv }) : t("backup.unwrapped", { label: u.summary.label }),
    );
    onUnwrapped();
    onClose();
  });
  const candidates = (keys ?? []).filter(canUnwrapWith);
  return (
    <Dialog title={t("backup.unwrap_title")} onClose={onClose}>
      <Field label={t("backup.wrap_file")} hint={t("backup.wrap_file_hint")}>
        <div className="button-row">
          <input
            type="text"
            value={path}
            onChange={(e) => setPath(e.target.value)}
            aria-label={t("backup.wrap_file")}
            data-testid="unwrap-path"
          />
          <button onClick={() => void pick()}>{t("backup.choose")}</button>
        </div>
      </Field>
      <Field label={t("backup.unwrapping_key")} hint={t("backup.unwrapping_key_hint")}>
        <select
          value={with_ ?? ""}
          onChange={(e) => setWith(e.target.value ? Number(e.target.value) : null)}
          aria-label={t("backup.unwrapping_key")}
          data-testid="unwrap-with"
        >
          <option value="">{t("backup.choose")}</option>
          {candidates.map((k) => (
            <option key={k.handle} value={k.handle}>
              {t("backup.candidate", { label: k.label, class: objectClassName(k.class), algorithm: k.algorithm })}
            </option>
          ))}
        </select>
      </Field>
      <Field label={t("attributes.label")} hint={t("backup.unwrap_label_hint")}>
        <input type="text" value={label} onChange={(e) => setLabel(e.target.value)} aria-label={t("attributes.label")} />
      </Field>
      <div className="button-row">
        <button
          className="primary"
          onClick={() => void run()}
          disabled={loading || with_ === null || !path.trim()}
          data-testid="unwrap-run"
        >
          {t("backup.unwrap")}
        </button>
        <button onClick={onClose}>{t("common.cancel")}</button>
      </div>
      {error && <ErrorBox error={error} />}
    </Dialog>
  );
}
