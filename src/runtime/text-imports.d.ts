/**
 * Recipe files imported as text (`import x from "…/Dockerfile" with { type: "text" }`), so the
 * compiled single binary embeds the image recipes (issue 2 §11).
 */
declare module "*/Dockerfile" {
  const text: string;
  export default text;
}
