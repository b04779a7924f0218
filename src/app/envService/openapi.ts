// GET /v1/openapi.json: every route of the environment service, its body and its reply, as OpenAPI 3.1.
import { EVAL_MODES } from '../../core/eval/modes';

const error = { $ref: '#/components/schemas/Error' };
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const oneOrMany = (ref: string) => ({ oneOf: [{ $ref: ref }, { type: 'array', items: { $ref: ref } }] });
const errors = {
  400: {
    description: 'bad request (bad JSON, unknown protocol or panel, a database outside the roots)',
    ...json(error),
  },
  401: { description: 'missing or wrong bearer token', ...json(error) },
  403: { description: 'a cross-origin request (an Origin header naming another site)', ...json(error) },
  404: { description: 'no such route, database or episode', ...json(error) },
  413: { description: 'body, batch, history or a text field too large', ...json(error) },
  415: { description: 'a body not sent as Content-Type: application/json', ...json(error) },
  421: { description: 'a Host header naming another server (see --allow-host)', ...json(error) },
  429: { description: 'too many open episodes, or too many request items in flight', ...json(error) },
  500: { description: 'internal error (the server keeps serving)', ...json(error) },
};

export function openApi(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Quarry environment service',
      version,
      description: "Quarry's text-to-SQL environment and reward panels (docs/training.md).",
    },
    paths: {
      '/v1/health': {
        get: {
          summary: 'liveness',
          responses: {
            200: {
              description: 'ok',
              ...json({ type: 'object', properties: { ok: { const: true }, version: { type: 'string' } } }),
            },
          },
        },
      },
      '/v1/openapi.json': { get: { summary: 'this document', responses: { 200: { description: 'OpenAPI 3.1' } } } },
      '/v1/episodes': {
        post: {
          summary: "start episodes: the protocol's opening messages",
          requestBody: json(oneOrMany('#/components/schemas/EpisodeRequest')),
          responses: {
            200: { description: 'episode id and opening messages', ...json(oneOrMany('#/components/schemas/Episode')) },
            ...errors,
          },
        },
      },
      '/v1/episodes/{id}': {
        get: {
          summary: "the episode's trajectory record so far",
          responses: { 200: { description: 'quarry.trajectory/1 record' }, ...errors },
        },
        delete: {
          summary: 'end an episode',
          responses: { 200: { description: 'ended', ...json({ type: 'object' }) }, ...errors },
        },
      },
      '/v1/episodes/{id}/step': {
        post: {
          summary: 'one model turn: the observation, and when done the reward of the panel',
          requestBody: json({
            type: 'object',
            required: ['action'],
            properties: { action: { type: 'string', description: "the model's raw turn" } },
          }),
          responses: { 200: { description: 'step', ...json({ $ref: '#/components/schemas/Step' }) }, ...errors },
        },
      },
      '/v1/reward': {
        post: {
          summary: 'score with a panel: exactly what `quarry reward --json` prints',
          requestBody: json(oneOrMany('#/components/schemas/RewardRequest')),
          responses: {
            200: {
              description: 'panel result; with --test-suite, testSuite says how the answer went over the suite',
              ...json({
                type: 'object',
                properties: {
                  panel: { type: 'string' },
                  total: { type: 'number' },
                  terms: { type: 'array' },
                  testSuite: {
                    type: 'object',
                    properties: {
                      databases: { type: 'integer' },
                      singleCorrect: { type: 'boolean' },
                      disagreed: { type: 'string', description: '<db_id>/<file> of the first variant that disagreed' },
                    },
                  },
                },
              }),
            },
            ...errors,
          },
        },
      },
      '/v1/execute': {
        post: {
          summary: 'run read-only SQL in the sandbox: the record `quarry exec-batch` writes',
          requestBody: json(oneOrMany('#/components/schemas/ExecuteRequest')),
          responses: { 200: { description: 'execution record' }, ...errors },
        },
      },
      '/v1/odt': {
        post: {
          summary: 'Progress-SQL ODT comparison: what `quarry odt --json` prints',
          requestBody: json(oneOrMany('#/components/schemas/OdtRequest')),
          responses: { 200: { description: 'ODT comparison' }, ...errors },
        },
      },
    },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'required when the server was started with --token-file',
        },
      },
      schemas: {
        Error: {
          type: 'object',
          properties: {
            error: { type: 'object', properties: { kind: { type: 'string' }, message: { type: 'string' } } },
          },
        },
        EpisodeRequest: {
          type: 'object',
          required: ['protocol', 'db', 'question'],
          properties: {
            protocol: { enum: ['skyrl', 'sqltrail', 'mtir', 'mtsqlr1', 'progress'] },
            db: { type: 'string', description: 'db_id under a --db-dir root, or a path inside one' },
            question: { type: 'string' },
            maxTurns: { type: 'integer', minimum: 1 },
            evidence: { type: 'string' },
            history: {
              type: 'array',
              items: {
                type: 'object',
                properties: { question: { type: 'string' }, sql: { type: 'string' }, result: { type: 'string' } },
              },
            },
            goldSql: { type: 'string' },
            panel: { type: 'string', description: "built-in panel or panel file; default the protocol's" },
          },
        },
        Episode: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            stop: { type: 'array', items: { type: 'string' } },
            messages: {
              type: 'array',
              items: { type: 'object', properties: { role: { type: 'string' }, content: { type: 'string' } } },
            },
          },
        },
        Step: {
          type: 'object',
          properties: {
            observation: { type: ['string', 'null'] },
            done: { type: 'boolean' },
            stop: { type: 'array', items: { type: 'string' } },
            reward: { type: ['number', 'null'] },
            terms: { type: ['object', 'null'], additionalProperties: { type: 'number' } },
            info: { type: 'object' },
          },
        },
        RewardRequest: {
          type: 'object',
          required: ['panel'],
          properties: {
            panel: { type: 'string' },
            db: { type: 'string' },
            goldSql: { type: 'string' },
            predSql: { type: 'string' },
            trajectory: { type: 'object', description: 'a quarry.trajectory/1 record' },
            difficulty: { enum: ['simple', 'medium', 'hard', 'extra'] },
            mode: { enum: [...EVAL_MODES] },
            turnBudget: { type: 'integer' },
          },
        },
        ExecuteRequest: {
          type: 'object',
          required: ['db', 'sql'],
          properties: {
            id: {},
            db: { type: 'string' },
            sql: { type: 'string' },
            timeoutMs: { type: 'integer' },
            maxRows: { type: 'integer' },
            format: { enum: ['df', 'table', 'json', 'text'] },
          },
        },
        OdtRequest: {
          type: 'object',
          required: ['pred', 'gold'],
          properties: { pred: { type: 'string' }, gold: { type: 'string' }, db: { type: 'string' } },
        },
      },
    },
    security: [{}, { bearer: [] }],
  };
}
