// @ts-check
// The API reference page's script (src/core/docs.ts): Swagger UI on the build's OpenAPI document.
// A file of its own because the page's policy allows no inline script.
// SwaggerUIBundle is the global of swagger-ui-bundle.js, loaded before this script (swagger-ui.d.ts).
(function () {
  const root = /** @type {HTMLElement} */ (document.getElementById("swagger-ui"));
  const url = new URL(/** @type {string} */ (root.dataset.url), document.baseURI).href;

  /**
   * Swagger UI 5 leaves a `$ref` among a path's own parameters unresolved for OpenAPI 3.1 (it shows
   * an untyped "any" row instead of `format`), so they are put in place here, from the document's
   * own components: only local references, as the document has.
   * @param {{ paths?: Record<string, { parameters?: object[] }>, components?: { parameters?: Record<string, object> } }} doc
   */
  function inlinePathParameters(doc) {
    const named = doc.components?.parameters ?? {};
    for (const item of Object.values(doc.paths ?? {}))
      if (item.parameters)
        item.parameters = item.parameters.map((p) => {
          const ref = /** @type {{ $ref?: unknown }} */ (p).$ref;
          const name = typeof ref === "string" && ref.startsWith("#/components/parameters/") ? ref.slice(24) : undefined;
          return name !== undefined && named[name] ? named[name] : p;
        });
    return doc;
  }

  fetch(url)
    .then((response) => {
      if (!response.ok) throw new Error(`${url}: ${response.status}`);
      return response.json();
    })
    .then((doc) =>
      SwaggerUIBundle({
        spec: inlinePathParameters(doc),
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
      }),
    )
    .catch((error) => {
      root.textContent = `The OpenAPI document could not be loaded (${error.message}).`;
      document.documentElement.dataset.docs = "failed";
    });
})();
