// The bundled tiny ONNX model is a demo of the bookshop sample, not a text-to-SQL model: it is labelled so where it
// is chosen (status bar, model picker), and the first time it is asked about another database Quarry offers, once,
// to set up a real model. The decision is pure (tested without VS Code); the offer itself is a notification.
import { basename } from 'node:path';
import type { QuarrySettings } from '../settings';

/** What the status bar and the picker call the bundled model. */
export const DEMO_MODEL_LABEL = 'tiny-sql (bookshop demo)';

/** The one database the demo model was made for (media/samples/bookshop.sqlite). */
const DEMO_DATABASE = 'bookshop.sqlite';

/** Where the "offered once" flag is kept (global state: once per user, not per workspace). */
export const DEMO_OFFER_KEY = 'quarry.demoModel.offered';

/** Whether the settings select the bundled demo model. */
export function usesDemoModel(settings: QuarrySettings): boolean {
  return settings.model.backend === 'onnx' && settings.model.onnxPath.trim() === '';
}

/** Whether asking about `dbPath` should offer a real model: the demo model, another database, not offered before. */
export function shouldOfferRealModel(settings: QuarrySettings, dbPath: string, offeredBefore: boolean): boolean {
  return !offeredBefore && usesDemoModel(settings) && basename(dbPath).toLowerCase() !== DEMO_DATABASE;
}

/** The offer's words. */
export function realModelOffer(dbLabel: string): string {
  return (
    `The bundled tiny model is a demo of the bookshop sample: it will not answer well about ${dbLabel}. ` +
    'Set up a real model — an OpenAI-compatible server, a VS Code chat model, a local ONNX model directory or a ' +
    'trained checkpoint?'
  );
}
