// Generate a key from a preset, with the seed's label style, sizes, HSS capacity and the
// key-generation time warning shown before anything is made.
import { useEffect, useMemo, useState } from "react";
import type { KeySpec, LmotsType, LmsType } from "../bindings";
import { Dialog, ErrorBox, Field, ProgressBar } from "../components";
import { api } from "../ipc";
import { useCommand } from "../useCommand";

interface Preset {
  id: string;
  group: string;
  label: string;
  spec: KeySpec | null;
}

const PRESETS: Preset[] = [
  { id: "ml-dsa-44", group: "Post-quantum signatures", label: "ML-DSA-44", spec: { kind: "ml-dsa", set: "ML-DSA-44" } },
  { id: "ml-dsa-65", group: "Post-quantum signatures", label: "ML-DSA-65", spec: { kind: "ml-dsa", set: "ML-DSA-65" } },
  { id: "ml-dsa-87", group: "Post-quantum signatures", label: "ML-DSA-87", spec: { kind: "ml-dsa", set: "ML-DSA-87" } },
  { id: "hss", group: "Post-quantum signatures", label: "HSS/LMS (stateful)", spec: null },
  { id: "ml-kem-512", group: "Post-quantum key encapsulation", label: "ML-KEM-512", spec: { kind: "ml-kem", set: "ML-KEM-512" } },
  { id: "ml-kem-768", group: "Post-quantum key encapsulation", label: "ML-KEM-768", spec: { kind: "ml-kem", set: "ML-KEM-768" } },
  { id: "ml-kem-1024", group: "Post-quantum key encapsulation", label: "ML-KEM-1024", spec: { kind: "ml-kem", set: "ML-KEM-1024" } },
  { id: "ec-p256", group: "Classical", label: "EC P-256", spec: { kind: "ec", curve: "P256" } },
  { id: "ec-p384", group: "Classical", label: "EC P-384", spec: { kind: "ec", curve: "P384" } },
  { id: "ed25519", group: "Classical", label: "Ed25519", spec: { kind: "ec", curve: "Ed25519" } },
  { id: "rsa-2048", group: "Classical", label: "RSA-2048", spec: { kind: "rsa", bits: 2048 } },
  { id: "rsa-3072", group: "Classical", label: "RSA-3072", spec: { kind: "rsa", bits: 3072 } },
  { id: "rsa-4096", group: "Classical", label: "RSA-4096", spec: { kind: "rsa", bits: 4096 } },
  { id: "aes-128", group: "Secret keys", label: "AES-128", spec: { kind: "aes", bits: 128 } },
  { id: "aes-256", group: "Secret keys", label: "AES-256", spec: { kind: "aes", bits: 256 } },
  { id: "generic-secret", group: "Secret keys", label: "Generic secret (256 bits)", spec: { kind: "generic-secret", bits: 256 } },
];

const LMS: LmsType[] = ["LMS_SHA256_M32_H5", "LMS_SHA256_M32_H10", "LMS_SHA256_M32_H15", "LMS_SHA256_M32_H20", "LMS_SHA256_M32_H25"];
const LMOTS: LmotsType[] = ["LMOTS_SHA256_N32_W1", "LMOTS_SHA256_N32_W2", "LMOTS_SHA256_N32_W4", "LMOTS_SHA256_N32_W8"];

export function GenerateDialog({
  partitionId,
  onClose,
  onDone,
}: {
  partitionId: string;
  onClose: () => void;
  onDone: (label: string) => void;
}) {
  const [preset, setPreset] = useState("ml-dsa-65");
  const [levels, setLevels] = useState<[LmsType, LmotsType][]>([
    ["LMS_SHA256_M32_H5", "LMOTS_SHA256_N32_W8"],
    ["LMS_SHA256_M32_H5", "LMOTS_SHA256_N32_W8"],
  ]);
  const [purpose, setPurpose] = useState("release");
  const [label, setLabel] = useState("");
  const [labelEdited, setLabelEdited] = useState(false);
  const [token, setToken] = useState(true);
  const { run: describe, data: info, error: infoError } = useCommand(api.describeKeySpec, { keepError: true });
  const [elapsed, setElapsed] = useState(0);

  const spec: KeySpec | null = useMemo(() => {
    if (preset === "hss") return { kind: "hss", params: { levels } };
    return PRESETS.find((p) => p.id === preset)?.spec ?? null;
  }, [preset, levels]);

  useEffect(() => {
    if (!spec) return;
    void describe(spec, purpose).then((i) => {
      if (i && !labelEdited) setLabel(i.suggested_label);
    });
  }, [describe, spec, purpose, labelEdited]);

  const {
    run: generateKey,
    loading: busy,
    error,
  } = useCommand(async (spec: KeySpec, label: string) => {
    const r = await api.generateKey(partitionId, { spec, label, token }, (e) => {
      if (e.kind === "elapsed") setElapsed(e.ms);
    });
    onDone(r.label);
    onClose();
  });
  const generate = async () => {
    if (!spec || !label.trim()) return;
    setElapsed(0);
    await generateKey(spec, label.trim());
  };

  const groups = Array.from(new Set(PRESETS.map((p) => p.group)));
  return (
    <Dialog
      title="Generate a key"
      onClose={busy ? () => undefined : onClose}
      wide
      footer={
        <>
          <button onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button
            className="primary"
            onClick={() => void generate()}
            disabled={busy || !label.trim() || !!infoError}
            data-testid="generate-submit"
          >
            {busy ? "Generating…" : "Generate"}
          </button>
        </>
      }
    >
      <div className="form-grid">
        <Field label="Algorithm">
          <select value={preset} onChange={(e) => setPreset(e.target.value)} disabled={busy} data-testid="preset" aria-label="Algorithm">
            {groups.map((g) => (
              <optgroup key={g} label={g}>
                {PRESETS.filter((p) => p.group === g).map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.label}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </Field>
        <Field label="Purpose" hint="Used in the suggested label: purpose_algorithm_date.">
          <input type="text" value={purpose} onChange={(e) => setPurpose(e.target.value)} disabled={busy} aria-label="Purpose" />
        </Field>
        <Field label="Label">
          <input
            type="text"
            value={label}
            onChange={(e) => {
              setLabel(e.target.value);
              setLabelEdited(true);
            }}
            disabled={busy}
            data-testid="key-label"
            aria-label="Label"
          />
        </Field>
        <fieldset className="radio-row">
          <legend>Lifetime</legend>
          <label>
            <input type="radio" checked={token} onChange={() => setToken(true)} disabled={busy} /> Token object (persistent)
          </label>
          <label>
            <input type="radio" checked={!token} onChange={() => setToken(false)} disabled={busy} /> Session object (gone at logout)
          </label>
        </fieldset>
      </div>
      {preset === "hss" && (
        <section className="hss-levels">
          <h4>HSS levels</h4>
          {levels.map((lv, i) => (
            <div className="inline-form" key={i}>
              <span>Level {i + 1}</span>
              <select
                value={lv[0]}
                onChange={(e) => setLevels(levels.map((x, j) => (j === i ? [e.target.value as LmsType, x[1]] : x)))}
                aria-label={`Level ${i + 1} LMS type`}
                disabled={busy}
              >
                {LMS.map((t) => (
                  <option key={t}>{t}</option>
                ))}
              </select>
              <select
                value={lv[1]}
                onChange={(e) => setLevels(levels.map((x, j) => (j === i ? [x[0], e.target.value as LmotsType] : x)))}
                aria-label={`Level ${i + 1} LM-OTS type`}
                disabled={busy}
              >
                {LMOTS.map((t) => (
                  <option key={t}>{t}</option>
                ))}
              </select>
              <button
                onClick={() => setLevels(levels.filter((_, j) => j !== i))}
                disabled={busy || levels.length === 1}
                aria-label={`Remove level ${i + 1}`}
              >
                Remove
              </button>
            </div>
          ))}
          <button
            onClick={() => setLevels([...levels, ["LMS_SHA256_M32_H5", "LMOTS_SHA256_N32_W8"]])}
            disabled={busy || levels.length >= 8}
          >
            Add level
          </button>
        </section>
      )}
      {infoError && <ErrorBox error={infoError} />}
      {info && (
        <dl className="info-grid spec-info" data-testid="spec-info">
          <div>
            <dt>Mechanism</dt>
            <dd>
              <code>{info.mechanism}</code>
            </dd>
          </div>
          {info.public_key_len !== null && (
            <div>
              <dt>Public key</dt>
              <dd>{info.public_key_len} bytes (checked after generation)</dd>
            </div>
          )}
          {info.signature_len !== null && (
            <div>
              <dt>Signature</dt>
              <dd>{info.signature_len.toLocaleString()} bytes</dd>
            </div>
          )}
          {info.signature_capacity !== null && (
            <div>
              <dt>Signatures</dt>
              <dd data-testid="hss-capacity">{BigInt(info.signature_capacity).toLocaleString()} in total — each one used up for good</dd>
            </div>
          )}
        </dl>
      )}
      {info?.keygen_warning && (
        <div className="notice warn" role="note">
          {info.keygen_warning}
        </div>
      )}
      {busy && (
        <ProgressBar
          done={0}
          total={0}
          label={`Generating on the HSM… ${(elapsed / 1000).toFixed(1)} s (the HSM cannot be interrupted once it has started)`}
        />
      )}
      {error && <ErrorBox error={error} title="No key was generated" />}
    </Dialog>
  );
}
