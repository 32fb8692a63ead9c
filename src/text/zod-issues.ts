/** The issues of a zod error (or anything shaped like one): each names a field path and says what is wrong. */
export interface IssueList {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}

/**
 * The first `max` issues (default 5) in one line, `a.b: message; c: message`; an issue at the
 * top of the value is `(root)`. An error with no issues is `malformed`.
 */
export function zodIssues(err: IssueList, max = 5): string {
  if (err.issues.length === 0) return "malformed";
  return err.issues
    .slice(0, max)
    .map((i) => `${i.path.length ? i.path.map(String).join(".") : "(root)"}: ${i.message}`)
    .join("; ");
}
