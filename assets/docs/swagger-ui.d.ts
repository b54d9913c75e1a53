// The part of swagger-ui-bundle.js (swagger-ui-dist) that docs.js uses: the global it defines.
declare function SwaggerUIBundle(options: {
  spec: object;
  domNode: HTMLElement;
  presets: readonly unknown[];
  layout: string;
  deepLinking: boolean;
  validatorUrl: string | null;
  supportedSubmitMethods: readonly string[];
  onComplete(): void;
}): unknown;
declare namespace SwaggerUIBundle {
  const presets: { readonly apis: unknown };
}
