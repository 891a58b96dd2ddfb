import { listModelPrices, type ModelPriceView, setModelPrice } from '../../engine/prices/index.js';
import { builder } from '../builder.js';

const ModelPrice = builder.objectRef<ModelPriceView>('ModelPrice').implement({
  description: "A model's price per million tokens, valid from a time until the next price of the model.",
  fields: (t) => ({
    model: t.exposeString('model'),
    inputUsdPerMTok: t.exposeFloat('inputUsdPerMTok'),
    outputUsdPerMTok: t.exposeFloat('outputUsdPerMTok'),
    validFrom: t.field({ type: 'DateTime', resolve: (p) => p.validFrom }),
    setBy: t.exposeString('setBy', {
      nullable: true,
      description: 'null for a price the engine shipped with',
    }),
  }),
});

const SetModelPriceInput = builder.inputType('SetModelPriceInput', {
  fields: (t) => ({
    model: t.string({ required: true }),
    inputUsdPerMTok: t.float({ required: true }),
    outputUsdPerMTok: t.float({ required: true }),
  }),
});

builder.queryField('modelPrices', (t) =>
  t.field({
    type: [ModelPrice],
    description:
      'The price in force for each model (or one model); with history: true, every price each had, newest first.',
    args: { model: t.arg.string(), history: t.arg.boolean() },
    resolve: (_r, a, ctx) => listModelPrices(ctx.engine, a),
  }),
);

builder.mutationField('setModelPrice', (t) =>
  t.field({
    type: ModelPrice,
    description: "Sets a model's price from now on (admin); earlier prices are kept as its history.",
    authScopes: { admin: true },
    args: { input: t.arg({ type: SetModelPriceInput, required: true }) },
    resolve: (_r, { input }, ctx) => setModelPrice(ctx.engine, ctx.actor!, input),
  }),
);
