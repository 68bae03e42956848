import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { notFound } from '@crm/http';
import { Elysia } from 'elysia';

/** Assets of the interactive reference, served from the swagger-ui-dist package (works offline, no CDN). */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>CRM API reference</title>
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: '/openapi/v1.yaml',
      dom_id: '#swagger-ui',
      deepLinking: true,
      persistAuthorization: true,
      presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
      layout: 'StandaloneLayout',
    });
  </script>
</body>
</html>`;

function assetsDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/** GET /openapi/v1.yaml (also under /v1), GET /docs and its assets: public, no key (contract §2). */
export function openApiRoutes(yaml: () => Promise<string>) {
  const cache = new Map<string, Uint8Array>();
  const document = async () =>
    new Response(await yaml(), { headers: { 'content-type': 'application/yaml; charset=utf-8', 'cache-control': 'no-cache' } });
  return new Elysia({ name: 'gateway-openapi' })
    .get('/openapi/v1.yaml', document)
    .get('/v1/openapi/v1.yaml', document)
    .get('/docs', () => new Response(DOCS_HTML, { headers: { 'content-type': 'text/html; charset=utf-8' } }))
    .get('/docs/assets/:file', async ({ params }) => {
      const type = ASSETS[params.file];
      if (!type) throw notFound('Asset');
      let bytes = cache.get(params.file);
      if (!bytes) {
        bytes = new Uint8Array(await readFile(join(assetsDir(), params.file)));
        cache.set(params.file, bytes);
      }
      return new Response(bytes as BodyInit, { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } });
    });
}
