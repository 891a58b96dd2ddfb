/** Model prices: the table the engine prices model calls from, and how operators change and read it. */
export { type ModelPriceView, listModelPrices, pricedModels, setModelPrice } from './prices.js';
export { type Usage, priceUsage, priceUsageCached } from './prices.js';
