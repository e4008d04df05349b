// "Jump to": from a key to its audit records, from a record to its key or to the signed file.
// A jump leaves a target for the next view (the Keys view searches for it, the Audit view
// filters by it, the Verify view opens with the file and its signature) and switches to it.
import { useCallback, useMemo, useState, type ReactNode } from "react";
import { createSlice } from "./context";
import { useNavigate } from "./navigation";

export interface SignedFile {
  file: string;
  sig: string;
}

/// The Audit view's table narrowed to a day (`YYYY-MM-DD`, UTC) and a record to scroll to.
export interface AuditTarget {
  day: string | null;
  seq: number | null;
}

interface Jumps {
  keySearch: string;
  auditSearch: string;
  auditTarget: AuditTarget | null;
  verifyTarget: SignedFile | null;
  /// The Keys view, searching for `search` (a key's id).
  showKeys: (search: string) => void;
  /// The Audit view, filtered by `search` (a key's id).
  showAudit: (search: string) => void;
  /// The Verify view, with a signed file and its signature filled in.
  showVerify: (target: SignedFile) => void;
  /// The Audit view, filtered to a day and scrolled to a record (from the Overview).
  showAuditRecords: (target: AuditTarget) => void;
  /// The Audit view took the target: the next visit starts unfiltered.
  consumeAuditTarget: () => void;
}

const [JumpsContext, useJumps] = createSlice<Jumps>("useJumps");
export { useJumps };

export function JumpsProvider({ children }: { children: ReactNode }) {
  const navigate = useNavigate();
  const [keySearch, setKeySearch] = useState("");
  const [auditSearch, setAuditSearch] = useState("");
  const [auditTarget, setAuditTarget] = useState<AuditTarget | null>(null);
  const consumeAuditTarget = useCallback(() => setAuditTarget(null), []);
  const [verifyTarget, setVerifyTarget] = useState<SignedFile | null>(null);
  const showKeys = useCallback(
    (search: string) => {
      setKeySearch(search);
      navigate("keys");
    },
    [navigate],
  );
  const showAudit = useCallback(
    (search: string) => {
      setAuditSearch(search);
      setAuditTarget(null);
      navigate("audit");
    },
    [navigate],
  );
  const showAuditRecords = useCallback(
    (target: AuditTarget) => {
      setAuditSearch("");
      setAuditTarget(target);
      navigate("audit");
    },
    [navigate],
  );
  const showVerify = useCallback(
    (target: SignedFile) => {
      setVerifyTarget(target);
      navigate("verify");
    },
    [navigate],
  );
  const value = useMemo(
    () => ({ keySearch, auditSearch, auditTarget, verifyTarget, showKeys, showAudit, showVerify, showAuditRecords, consumeAuditTarget }),
    [keySearch, auditSearch, auditTarget, verifyTarget, showKeys, showAudit, showVerify, showAuditRecords, consumeAuditTarget],
  );
  return <JumpsContext value={value}>{children}</JumpsContext>;
}
