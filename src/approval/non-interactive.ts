/** The approval provider for unattended runs (CI, `--non-interactive`): ask means deny. */
import type { ApprovalAnswer, ApprovalProvider } from "../policy/index.js";

/** Answers every request with `deny`, without asking anyone. */
export class NonInteractiveApproval implements ApprovalProvider {
  readonly interactive = false;
  async request(): Promise<ApprovalAnswer> {
    return "deny";
  }
}
