// The Sign form's state: one `SignRequest` (the type the sign command takes), changed
// through one updater, and what of it is sent for the files and keys at hand.
import { useCallback, useState } from "react";
import type { SignFormat, SignRequest, SigningKeyView } from "../../bindings";

// The OpenPGP formats (Ed25519, ECDSA and RSA keys).
export const OPENPGP_FORMATS: SignFormat[] = ["openpgp", "openpgp_binary", "openpgp_cleartext"];
// The "apt repository" preset: for a file named Release, Release.gpg (armored) and InRelease.
export const APT_FORMATS: SignFormat[] = ["openpgp", "openpgp_cleartext"];

/** Whether a key can make a format (as the backend decides: crates/console/src/sign/formats.rs). */
export function canMake(k: SigningKeyView, f: SignFormat): boolean {
  const s = k.scheme;
  // OpenPGP (gpg 2.2, sq 0.27) has Ed25519, ECDSA and RSA keys; minisign Ed25519 only; SSH
  // signatures (ssh-keygen -Y verify) Ed25519 and ECDSA P-256 keys.
  if (f === "minisign") return s.scheme === "ed25519";
  if (f === "sshsig") return s.scheme === "ed25519" || (s.scheme === "ecdsa" && s.curve === "P256");
  if (OPENPGP_FORMATS.includes(f)) return ["ed25519", "ecdsa", "rsa-pss"].includes(s.scheme);
  return true;
}

/// A key as a request names it: by its ID, stable across reconnections.
export const keyRef = (k: SigningKeyView) => `id:${k.id_hex}`;

/// The form as it opens: CMS beside each file, stop at the first failure. `files` stays
/// empty: the files are the sign queue's (dropped on the window), filled in when sent.
export function blankRequest(): SignRequest {
  return {
    key: "",
    also_keys: [],
    files: [],
    formats: ["cms"],
    manifest: false,
    out_dir: null,
    context: null,
    on_error: "stop",
    confirm_hss: false,
    chain: [],
  };
}

/// A change to the form: the fields that change, or a function of the request to them.
export type SignRequestUpdate = Partial<SignRequest> | ((r: SignRequest) => Partial<SignRequest>);

export function useSignRequest(): [SignRequest, (u: SignRequestUpdate) => void] {
  const [request, setRequest] = useState(blankRequest);
  const update = useCallback((u: SignRequestUpdate) => setRequest((r) => ({ ...r, ...(typeof u === "function" ? u(r) : u) })), []);
  return [request, update];
}

/// The formats of the request some signer can make (those none can are shown unchecked and
/// not sent): with several keys a format one of them can make is made by those that can.
export function chosenFormats(r: SignRequest, signers: SigningKeyView[]): SignFormat[] {
  return r.formats.filter((f) => !keyBound(f) || signers.some((k) => canMake(k, f)));
}

/// The formats only some keys can make.
function keyBound(f: SignFormat) {
  return f === "minisign" || f === "sshsig" || OPENPGP_FORMATS.includes(f);
}

/// What is sent: the form's request for the queued files and the chosen signers, without
/// what they cannot use (formats no signer makes, a context for keys other than ML-DSA, a
/// chain with several keys) and with the timestamp authority's CA for the kit.
export function requestToSend(
  r: SignRequest,
  { files, signers, tsaCa }: { files: string[]; signers: SigningKeyView[]; tsaCa: string | undefined },
): SignRequest {
  const [key, ...also] = signers;
  const formats = chosenFormats(r, signers);
  const mlDsa = signers.some((k) => k.scheme.scheme === "ml-dsa");
  const context = mlDsa && r.context ? r.context : null;
  return {
    ...r,
    key: key ? keyRef(key) : r.key,
    also_keys: also.map(keyRef),
    files,
    formats,
    context,
    kit: r.kit && { dir: r.kit.dir, user_id: r.kit.user_id?.trim() || undefined, tsa_ca: tsaCa, context: context ?? undefined },
    // Chain files are one key's chain; with several keys the token's are used.
    chain: formats.includes("cms") && also.length === 0 ? r.chain : [],
    context_login: signers.some((k) => k.always_authenticate) ? r.context_login : undefined,
  };
}

/// What the keys a request names can do, worked out once for the form's parts.
export interface Signers {
  /// The signing key, the others signing the same batch, and both together.
  key: SigningKeyView | null;
  also: SigningKeyView[];
  all: SigningKeyView[];
  /// HSS keys (they use up one-time signatures) and keys that want the PIN per signature.
  hss: SigningKeyView[];
  perUse: SigningKeyView[];
  mlDsa: boolean;
  /// The formats only some keys make: whether one of these can.
  can: { openpgp: boolean; minisign: boolean; sshsig: boolean };
  /// The request's formats these keys make (the others are shown unchecked, not sent).
  chosen: SignFormat[];
  /// Detached OpenPGP (armored or binary); `openpgp`: any OpenPGP output, cleartext too (the
  /// kit's OpenPGP certificate, SHA256SUMS.asc with the manifest).
  detachedOpenpgp: boolean;
  openpgp: boolean;
}

export function signersOf(r: SignRequest, keys: SigningKeyView[] | null): Signers {
  const key = keys?.find((k) => keyRef(k) === r.key) ?? null;
  const also = (keys ?? []).filter((k) => keyRef(k) !== r.key && r.also_keys.includes(keyRef(k)));
  const all = key ? [key, ...also] : [];
  const chosen = chosenFormats(r, all);
  const detachedOpenpgp = chosen.includes("openpgp") || chosen.includes("openpgp_binary");
  return {
    key,
    also,
    all,
    hss: all.filter((k) => k.scheme.scheme === "hss"),
    perUse: all.filter((k) => k.always_authenticate),
    mlDsa: all.some((k) => k.scheme.scheme === "ml-dsa"),
    can: {
      openpgp: all.some((k) => canMake(k, "openpgp")),
      minisign: all.some((k) => canMake(k, "minisign")),
      sshsig: all.some((k) => canMake(k, "sshsig")),
    },
    chosen,
    detachedOpenpgp,
    openpgp: detachedOpenpgp || chosen.includes("openpgp_cleartext"),
  };
}

/// Signatures a key makes per file of the formats it makes: CMS one, the signature raw and
/// bundle (and the others) share another.
export function perFileSignatures(k: SigningKeyView, formats: SignFormat[]): number {
  const made = formats.filter((f) => canMake(k, f));
  return (made.includes("cms") ? 1 : 0) + (made.some((f) => f !== "cms") ? 1 : 0);
}

/// One-time signatures an HSS key uses for a batch of `files` good files: per file, the
/// manifest, a self-signed certificate for CMS (none when a chain file may carry the key's).
export function hssNeeded(k: SigningKeyView, r: SignRequest, files: number): number {
  const selfSigned = r.formats.some((f) => f === "cms" && canMake(k, f)) && !k.has_certificate && r.chain.length === 0;
  return files * perFileSignatures(k, r.formats) + (r.manifest ? 1 : 0) + (selfSigned ? 1 : 0);
}

/// What each part of the form is given: the request, its updater, what its keys can do, and
/// whether a batch is being signed (the form is then read-only).
export interface SignFormProps {
  request: SignRequest;
  update: (u: SignRequestUpdate) => void;
  signers: Signers;
  busy: boolean;
}
