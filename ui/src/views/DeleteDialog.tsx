// Deleting keys: the officer types the label (or "delete N objects") that the backend asks
// for; the backend checks it again against the token before anything is destroyed.
import { useEffect, useState } from "react";
import type { ObjectSummary } from "../bindings";
import { Dialog, ErrorBox, Field } from "../components";
import { api } from "../ipc";
import { useCommand } from "../useCommand";

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
      title={objects.length === 1 ? "Delete a key" : `Delete ${objects.length} objects`}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>Cancel</button>
          <button
            className="danger"
            onClick={() => void run()}
            disabled={busy || phrase === null || typed !== phrase}
            data-testid="delete-submit"
          >
            {busy ? "Deleting…" : "Delete for good"}
          </button>
        </>
      }
    >
      <p>This cannot be undone. Signatures made with these keys stay valid, but nothing can be signed or decrypted with them again.</p>
      <ul className="delete-list">
        {objects.map((o) => (
          <li key={o.handle}>
            <strong>{o.label || "(no label)"}</strong> — {o.class.toLowerCase().replace(/_/g, " ")}, {o.algorithm || o.key_type}, ID{" "}
            {o.id_hex || "—"}
          </li>
        ))}
      </ul>
      {phrase !== null && (
        <Field label={`Type “${phrase}” to confirm`}>
          <input
            type="text"
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
            autoComplete="off"
            spellCheck={false}
            data-testid="delete-confirm"
            aria-label="Confirmation"
          />
        </Field>
      )}
      {error && <ErrorBox error={error} title="Nothing was deleted" />}
      {result && result.failed.length > 0 && (
        <div className="notice warn">
          {result.destroyed.length} deleted; not deleted:
          <ul>
            {result.failed.map((f) => (
              <li key={f.handle}>
                {f.label}: {f.error.message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </Dialog>
  );
}
