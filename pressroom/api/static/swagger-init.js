// Starts Swagger UI on /docs: a file, not an inline script, so the page's CSP allows scripts
// from this origin only. The document's URL comes from the page (data-spec-url).
"use strict";
window.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-spec-url"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    // a ?url= or ?configUrl= on the page's own address never loads another document
    queryConfigEnabled: false,
    validatorUrl: null, // the default sends the document to validator.swagger.io
    persistAuthorization: false, // the API key is not written to localStorage
    tryItOutEnabled: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
