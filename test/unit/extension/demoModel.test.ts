// The bundled tiny model is labelled a bookshop demo, and asking it about another database offers a real model once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_SETTINGS, type QuarrySettings } from '../../../src/extension/settings';
import { settingsModelLabel } from '../../../src/extension/models/create';
import { realModelOffer, shouldOfferRealModel, usesDemoModel } from '../../../src/extension/models/demoModel';

const withModel = (model: Partial<QuarrySettings['model']>): QuarrySettings => ({
  ...DEFAULT_SETTINGS,
  model: { ...DEFAULT_SETTINGS.model, ...model },
});

test('the bundled model is called a bookshop demo in the status bar label', () => {
  assert.equal(settingsModelLabel(withModel({ backend: 'onnx', onnxPath: '' })), 'onnx · tiny-sql (bookshop demo)');
  assert.equal(settingsModelLabel(withModel({ backend: 'onnx', onnxPath: '/m/qwen-onnx' })), 'onnx · qwen-onnx');
});

test('a real model is offered once, only for the demo model on a database other than the bookshop sample', () => {
  const demo = withModel({ backend: 'onnx', onnxPath: '' });
  assert.ok(usesDemoModel(demo));
  assert.equal(shouldOfferRealModel(demo, '/w/clinic.sqlite', false), true);
  assert.equal(shouldOfferRealModel(demo, '/w/clinic.sqlite', true), false, 'only once');
  assert.equal(shouldOfferRealModel(demo, '/w/samples/bookshop.sqlite', false), false, 'the demo is for bookshop');
  assert.equal(shouldOfferRealModel(withModel({ backend: 'onnx', onnxPath: '/m' }), '/w/c.sqlite', false), false);
  assert.equal(shouldOfferRealModel(withModel({ backend: 'openai' }), '/w/c.sqlite', false), false);
  assert.match(realModelOffer('clinic.sqlite'), /demo of the bookshop sample.*clinic\.sqlite.*real model/);
});
