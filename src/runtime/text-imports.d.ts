/**
 * Recipe files imported as text (`import x from "…/Dockerfile" with { type: "text" }`), so the
 * compiled single binary embeds the image recipes.
 */
declare module "*/Dockerfile" {
  const text: string;
  export default text;
}
