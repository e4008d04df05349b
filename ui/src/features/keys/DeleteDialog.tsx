// Deleting keys: the officer types the label (or "delete N objects") that the backend asks
// for; the backend checks it again against the token before anything is destroyed.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { ObjectSummary } from "../../bindings";
import { Dialog, ErrorBox, Field } from "../../components";
import { errorTexts } from "../../i18n";
import { api } from "../../ipc";
import { useCommand } from "../../useCommand";

export function DeleteDialog({
  partitionId,
  objects,
  onClose,
  onDone,
}: {
  partitionId: string;
  objects: ObjectSummary[];
  onClose: () => void;
  onDone: (n: number) => void;
}) {
  const { t } = useTranslation();
  const [typed, setTyped] = useState("");
  // The phrase to type, from the backend; the deletion, checked against it again there.
  const { run: askPhrase, data: phrase, error: phraseError } = useCommand(api.deletionPhrase);
  useEffect(() => {
    void askPhrase(
      partitionId,
      objects.map((o) => o.handle),
    );
  }, [askPhrase, partitionId, objects]);
  const destroying = useCommand(async (confirmation: string) => {
    const r = await api.destroyKeys(
      partitionId,
      objects.map((o) => o.handle),
      confirmation,
    );
    onDone(r.destroyed.length);
    if (r.failed.length === 0) onClose();
    return r;
  });
  const { loading: busy, data: result } = destroying;
  const error = phraseError ?? destroying.error;
  const run = () => destroying.run(typed);
  return (
    <Dialog
      title={objects.length === 1 ? t("delete.title_single") : t("delete.title_objects", { count: objects.length })}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>{t("common.cancel")}</button>
          <button
            className="danger"
            onClick={() => void run()}
            disabled={busy || phrase === null || typed !== phrase}
            data-testid="delete-submit"
          >
            {busy ? t("delete.deleting") : t("delete.submit")}
          </button>
        </>
      }
    >
      <p>{t("delete.warning")}</p>
      <ul className="delete-list">
        {objects.map((o) => (
          <li key={o.handle}>
            <strong>{o.label || t("connections.no_label")}</strong>{" "}
            {t("delete.object_line", {
              class: o.class.toLowerCase().replace(/_/g, " "),
              algorithm: o.algorithm || o.key_type,
              id: o.id_hex || "—",
            })}
          </li>
        ))}
      </ul>
      {phrase !== null && (
        <Field label={t("delete.type_to_confirm", { phrase })}>
          <input
            type="text"
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
            autoComplete="off"
            spellCheck={false}
            data-testid="delete-confirm"
            aria-label={t("delete.confirmation")}
          />
        </Field>
      )}
      {error && <ErrorBox error={error} title={t("delete.nothing_deleted")} />}
      {result && result.failed.length > 0 && (
        <div className="notice warn">
          {t("delete.partial", { count: result.destroyed.length })}
          <ul>
            {result.failed.map((f) => (
              <li key={f.handle}>
                {f.label}: {errorTexts(f.error).message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </Dialog>
  );
}
