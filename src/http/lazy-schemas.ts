// Compiles a route's schemas on its first request instead of when the app starts (Fastify's default). A server has
// about 85 routes whose schemas come from the registry; compiling them all costs 1.7-2.7 s of CPU, though most
// routes are never called by a short-lived server (a test's, above all). `millrace serve` compiles them all with
// `warm()` before it listens, as Fastify would. Fastify offers no lazy mode, so its own compilers
// (@fastify/ajv-compiler, @fastify/fast-json-stringify-compiler, with their default options) are wrapped: validation
// and serialization are exactly Fastify's.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type RouteCompiler<F> = (route: { schema: unknown }) => F;
type Validator = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type Serializer = (data: unknown) => string;

// One pool per process: servers built from the same registry share Ajv's compiled shared schemas.
const validators = AjvCompiler() as (external: unknown, options: unknown) => RouteCompiler<Validator>;
const serializers = SerializerSelector() as (external: unknown, options: unknown) => RouteCompiler<Serializer>;

export interface LazySchemas {
  /** Fastify's `schemaController.compilersFactory`. */
  compilersFactory: CompilersFactory;
  /** Compiles every route schema not compiled yet (one route per event-loop turn). */
  warm(): Promise<void>;
}

export function lazySchemas(): LazySchemas {
  const pending = new Set<() => void>();
  /** A function that compiles on first use, and is listed for `warm` until then. */
  const deferred = <F>(compile: () => F): (() => F) => {
    let real: F | undefined;
    const get = () => {
      if (real === undefined) {
        real = compile();
        pending.delete(get);
      }
      return real;
    };
    pending.add(get);
    return get;
  };
  const factory = {
    buildValidator(external: unknown, options: unknown): RouteCompiler<Validator> {
      let compiler: RouteCompiler<Validator> | undefined;
      return (route) => {
        const real = deferred(() => {
          compiler ??= validators(external, options);
          return compiler(route);
        });
        const validate: Validator = (data, context) => {
          const v = real();
          // Ajv validators take the parent as context so that a coerced root value is written back to the request.
          return v.schemaEnv ? v(data, context) : v(data);
        };
        // Fastify passes that context only to functions with `schemaEnv`, and reads `errors` after a failed call.
        validate.schemaEnv = true;
        Object.defineProperty(validate, 'errors', { get: () => real().errors });
        return validate;
      };
    },
    buildSerializer(external: unknown, options: unknown): RouteCompiler<Serializer> {
      const compiler = serializers(external, options);
      return (route) => {
        const real = deferred(() => compiler(route));
        return (data) => real()(data);
      };
    },
  };
  return {
    // The packages' declared types describe Ajv's own `compile`; Fastify calls them with `{ schema, method, url, … }`.
    compilersFactory: factory as unknown as CompilersFactory,
    async warm() {
      for (const compile of pending) {
        compile();
        await nextTurn();
      }
    },
  };
}
