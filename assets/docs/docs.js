// @ts-check
// The API reference page's script (src/core/docs.ts): Swagger UI on the build's OpenAPI document.
// A file of its own because the page's policy allows no inline script.
// SwaggerUIBundle is the global of swagger-ui-bundle.js, loaded before this script (swagger-ui.d.ts).
(function () {
  const root = /** @type {HTMLElement} */ (document.getElementById("swagger-ui"));
  SwaggerUIBundle({
    url: new URL(/** @type {string} */ (root.dataset.url), document.baseURI).href,
    domNode: root,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    // The public validator would receive the document: nothing leaves this host.
    validatorUrl: null,
    // A static copy answers only these; the others would be refused with 405.
    supportedSubmitMethods: ["get", "head", "options"],
    // Marks the page rendered, for the browser test.
    onComplete: () => {
      document.documentElement.dataset.docs = "ready";
    },
  });
})();
