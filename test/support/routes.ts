import { NestExpressApplication } from '@nestjs/platform-express';

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

/**
 * Every route Express knows in the app's router, from Nest's registrations, whether documented
 * or not, as [METHOD, path] with Express parameters (`:id`) left in.
 */
export function routesOf(app: NestExpressApplication, prefix = '/'): [string, string][] {
  const { stack } = (app.getHttpAdapter().getInstance() as { router: { stack: RouterLayer[] } })
    .router;
  return stack.flatMap(({ route }) =>
    route && route.path.startsWith(prefix)
      ? Object.keys(route.methods).map(
          (method) => [method.toUpperCase(), route.path] as [string, string],
        )
      : [],
  );
}

/** Every /api route of the app. */
export const apiRoutes = (app: NestExpressApplication): [string, string][] => routesOf(app, '/api');

/** A requestable path for a route: each parameter filled with a well-formed UUID. */
export const concretePath = (path: string): string =>
  path.replace(/:[A-Za-z]+/g, '6f1c5c3e-0000-4000-8000-000000000000');
