// The detail pane's OpenPGP and minisign section for a signing key: the OpenPGP fingerprint
// (once the key's creation time is fixed on the token), the certificate export with a user
// ID the officer types, and an Ed25519 key's minisign.pub.
import { useEffect, useState } from "react";
import type { KeyDetails } from "../bindings";
import { ErrorBox, Field } from "../components";
import { api } from "../ipc";
import { useToast } from "../state";
import { useCommand } from "../useCommand";

/** One line of printable text, as the backend requires (it checks again). */
function uidProblem(uid: string): string | null {
  if (!uid.trim()) return "Type a user ID, e.g. Release Signing <release@example.org>.";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(uid)) return "A user ID is one line: no newline or other control characters.";
  return null;
}

export function KeyFormats({ partitionId, details }: { partitionId: string; details: KeyDetails }) {
  const toast = useToast();
  const handle = details.summary.handle;
  const { run: load, data: pgp } = useCommand(api.openpgpKey);
  const [uid, setUid] = useState("");
  useEffect(() => {
    void load(partitionId, handle);
  }, [load, partitionId, handle]);
  const base = (details.summary.label || details.summary.id_hex || "key").replace(/[^A-Za-z0-9._-]/g, "_");
  const exportCert = useCommand(async () => {
    const c = await api.saveOpenpgpCertificate(partitionId, handle, uid, `${base}.asc`);
    if (c) {
      toast("ok", `Saved the OpenPGP certificate ${c.fingerprint}.`);
      void load(partitionId, handle);
    }
    return c;
  });
  const { run: saveMinisign } = useCommand(
    async () => {
      const p = await api.saveMinisignPublicKey(partitionId, handle);
      if (p) toast("ok", `Saved ${p}.`);
    },
    { errorToast: "Export failed" },
  );
  // Keys without an OpenPGP form (ML-DSA, HSS) get no section: the backend says so by error.
  if (!pgp) return null;
  const problem = uid ? uidProblem(uid) : null;
  return (
    <section className="pubkey" data-testid="key-formats">
      <h4>OpenPGP and minisign</h4>
      <p>
        OpenPGP fingerprint:{" "}
        {pgp.fingerprint ? (
          <code className="fingerprint" data-testid="openpgp-fingerprint">
            {pgp.fingerprint}
          </code>
        ) : (
          <span className="muted" data-testid="openpgp-fingerprint">
            not fixed yet — the first certificate or OpenPGP signature fixes the key's creation time on the token
          </span>
        )}
      </p>
      <Field label="User ID" hint={problem ?? "Name <address>; the HSM signs the certificate."}>
        <input
          type="text"
          value={uid}
          onChange={(e) => setUid(e.target.value)}
          placeholder="Release Signing <release@example.org>"
          aria-label="OpenPGP user ID"
          data-testid="openpgp-uid"
        />
      </Field>
      <div className="button-row">
        <button onClick={() => void exportCert.run()} disabled={!uid || !!problem || exportCert.loading} data-testid="export-openpgp">
          Export OpenPGP certificate…
        </button>
        {pgp.algorithm === "eddsa_legacy" && (
          <button onClick={() => void saveMinisign()} data-testid="export-minisign">
            Save minisign.pub…
          </button>
        )}
      </div>
      {exportCert.error && <ErrorBox error={exportCert.error} />}
    </section>
  );
}
