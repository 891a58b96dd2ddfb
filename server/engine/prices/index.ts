/** Model prices: the table the engine prices model calls from, and how operators change and read it. */
export { type ModelPriceView, listModelPrices, pricedModels, setModelPrice } from './commands.js';
export { type Usage, priceUsage, priceUsageCached } from './table.js';
