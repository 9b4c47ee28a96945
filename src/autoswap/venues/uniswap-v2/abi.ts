// The parts of Uniswap V2's interfaces the venue calls or reads (IUniswapV2Router02, IUniswapV2Factory,
// IUniswapV2Pair, ERC-20 allowance/approve): viem encodes and decodes them.
import { parseAbi, toEventSelector } from 'viem';

export const routerAbi = parseAbi([
  'function WETH() view returns (address)',
  'function factory() view returns (address)',
  'function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[] amounts)',
  'function swapExactETHForTokens(uint256 amountOutMin, address[] path, address to, uint256 deadline) payable returns (uint256[] amounts)',
  'function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) returns (uint256[] amounts)',
]);

export const factoryAbi = parseAbi(['function getPair(address tokenA, address tokenB) view returns (address pair)']);

export const pairAbi = parseAbi([
  'event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)',
  'event Sync(uint112 reserve0, uint112 reserve1)',
  'function getReserves() view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast)',
  'function token0() view returns (address)',
]);

export const allowanceAbi = parseAbi([
  'function allowance(address owner, address spender) view returns (uint256)',
  'function approve(address spender, uint256 value) returns (bool)',
]);

export const SWAP_TOPIC = toEventSelector('Swap(address,uint256,uint256,uint256,uint256,address)');
