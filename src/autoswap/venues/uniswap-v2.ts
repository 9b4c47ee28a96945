// The live autoswap venue, Uniswap V2 on an EVM network: its configuration (its SWAP_CONFIG entry), the venue and
// its factory. The parts live in ./uniswap-v2/ (docs/autoswap.md, "Uniswap V2 venue").
export { parseUniswapV2Options, uniswapV2ConfigSchema, SwapConfigError, type UniswapV2Config, type UniswapV2NetworkConfig } from './uniswap-v2/config.ts';
export { UniswapV2Venue, uniswapV2Venue, swapSendId, type NetworkFee, type UniswapV2Deps } from './uniswap-v2/venue.ts';
