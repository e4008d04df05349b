// Key backup by wrapping: the KCV of an AES key, and the Wrap / Unwrap dialogs. Only
// extractable keys leave the token; HSS keys never (a copy would reuse one-time keys); Luna
// partitions back up with the Backup HSM instead.
import { useEffect, useState } from "react";
import type { KeyDetails, ObjectSummary } from "../bindings";
import { Dialog, ErrorBox, Field } from "../components";
import { api } from "../ipc";
import { usePartition, useToast } from "../state";
import { useCommand } from "../useCommand";

export function Kcv({ partitionId, handle }: { partitionId: string; handle: number }) {
  const { run, data, error } = useCommand(api.keyCheckValue);
  useEffect(() => {
    void run(partitionId, handle);
  }, [run, partitionId, handle]);
  if (error) return null;
  if (!data) return null;
  return (
    <p>
      KCV <code data-testid="kcv">{data}</code>
    </p>
  );
}

function canWrapWith(k: ObjectSummary) {
  return (
    (k.class === "SECRET_KEY" && k.key_type === "AES") || (k.key_type === "RSA" && (k.class === "PUBLIC_KEY" || k.class === "PRIVATE_KEY"))
  );
}

export function WrapDialog({ partitionId, details, onClose }: { partitionId: string; details: KeyDetails; onClose: () => void }) {
  const toast = useToast();
  const { partition } = usePartition();
  const { run: list, data: keys } = useCommand(api.listKeys);
  const [with_, setWith] = useState<number | null>(null);
  useEffect(() => {
    void list(partitionId);
  }, [list, partitionId]);
  const s = details.summary;
  const isHss = s.algorithm.startsWith("HSS");
  const refusal = isHss
    ? "HSS keys are never wrapped: a copy would sign with the same one-time keys again."
    : s.extractable !== true
      ? "This key is not extractable (CKA_EXTRACTABLE is false): the token does not let it leave."
      : null;
  const { run, loading, error } = useCommand(async () => {
    if (with_ === null) return;
    const f = await api.wrapKey(partitionId, s.handle, with_, `${(s.label || "key").replace(/[^A-Za-z0-9._-]/g, "_")}.wrapped.json`);
    if (f) {
      toast("ok", `Wrapped ${f.label} with ${f.mechanism}.`);
      onClose();
    }
  });
  const candidates = (keys ?? []).filter((k) => k.handle !== s.handle && canWrapWith(k));
  return (
    <Dialog title={`Wrap ${s.label}`} onClose={onClose}>
      {partition?.luna && <div className="notice">Luna partitions back up with the Backup HSM; cloning is not done here.</div>}
      {refusal ? (
        <div className="notice warn" data-testid="wrap-refusal">
          {refusal}
        </div>
      ) : (
        <>
          <Field
            label="Wrapping key"
            hint="An AES key (key wrap with padding), or an RSA key pair or imported RSA public key (RSA-OAEP, secret keys only)"
          >
            <select value={with_ ?? ""} onChange={(e) => setWith(e.target.value ? Number(e.target.value) : null)} aria-label="Wrapping key">
              <option value="">Choose…</option>
              {candidates.map((k) => (
                <option key={k.handle} value={k.handle}>
                  {k.label} ({k.class.toLowerCase().replace("_", " ")}, {k.algorithm})
                </option>
              ))}
            </select>
          </Field>
          <div className="button-row">
            <button className="primary" onClick={() => void run()} disabled={loading || with_ === null}>
              Wrap and save…
            </button>
            <button onClick={onClose}>Cancel</button>
          </div>
        </>
      )}
      {error && <ErrorBox error={error} />}
    </Dialog>
  );
}
