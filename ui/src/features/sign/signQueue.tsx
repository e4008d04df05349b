// Files waiting to be signed: dropped on the window or picked, shown in the Sign view.
import { useMemo, useState, type Dispatch, type ReactNode, type SetStateAction } from "react";
import { createSlice } from "../../state/context";

const [SignQueue, useSignQueue] = createSlice<{ signFiles: string[]; setSignFiles: Dispatch<SetStateAction<string[]>> }>("useSignQueue");
export { useSignQueue };

export function SignQueueProvider({ children }: { children: ReactNode }) {
  const [signFiles, setSignFiles] = useState<string[]>([]);
  const value = useMemo(() => ({ signFiles, setSignFiles }), [signFiles]);
  return <SignQueue value={value}>{children}</SignQueue>;
}
