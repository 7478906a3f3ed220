"""The registry: the 14 data sets of the study, their files, pinned checksums, sources and
split rules, plus the synthetic family ``ringnorm_d{d}_l{l}`` of Experiment 6.

``DATASETS`` maps a name to a :class:`DatasetSpec`. Iteration gives the 14 names of
experiments.md (in its order) followed by the 24 listed synthetic names (d in {20, 40, 80}
x l in 2^7..2^14); lookup also accepts any other ``ringnorm_d<d>_l<l>``.

Checksums
---------
:data:`PINNED_SHA256` is the project's pinned record of the data: the sha256 of the
*decompressed* content of every file used (for ``.gz`` files the gunzipped bytes), computed
once from the copies in ``shared/data`` (MANIFEST.md lists the compressed files' hashes). A
re-compressed copy therefore validates; a different version of a file does not.

Sources
-------
Each file lists its URLs in the order they are tried after the mirror: the original publisher
(LIBSVM data sets page, UCI archive, MNIST mirrors) and the exact public copy the pinned file
was taken from (a GitHub snapshot at a fixed commit, which is also the "stable public mirror" of
the IDA ``.asc`` files). Where a publisher's copy is known to differ from the pinned bytes the
file's note says so; such a download fails verification and the next URL is tried.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Callable

from .cache import SourceFiles
from .containers import RawSplit
from .errors import UnknownDatasetError
from .files import FileSpec
from .splits import (
    build_bank,
    build_ida,
    build_libsvm_head_tail,
    build_libsvm_pair,
    build_libsvm_random,
    build_mnist_pair,
    build_parkinson,
    build_table_random,
    ida_relpaths,
)
from .synthetic import (
    N_TEST,
    RINGNORM_DIMS,
    RINGNORM_SIZES,
    build_ringnorm,
    parse_ringnorm_name,
    ringnorm_name,
)

__all__ = [
    "PINNED_SHA256",
    "FILES",
    "DatasetSpec",
    "DATASETS",
    "BENCHMARK_NAMES",
    "list_datasets",
    "get_spec",
    "dataset_checksums",
]

# fmt: off
#: sha256 of the decompressed content of every data file used (relpath -> hex digest).
PINNED_SHA256: dict[str, str] = {
    "adult_a1a/a1a": "eb54c45f1bdb51286f803dd092eb8202b44637a858fc6c4e533a2d64a0d94b4e",
    "adult_a1a/a1a.t.gz": "b98244653c31ac5b151097866216831b962cb5a2857c91e8b276cdfcc4c44771",
    "banana/ida/banana_test_data_1.asc.gz": "e9979e1ffeb52f3a4c541eca4f2967ab2dee22e768e775229d954ee725acfdf5",
    "banana/ida/banana_test_data_2.asc.gz": "df1d99cc572c474b42400337fad35db3e6440508f3be24df435cfa590dc8186b",
    "banana/ida/banana_test_data_3.asc.gz": "e5911eaf2bb78391c9af5fca3c7f5a2972c5e0cbf19da39d298f4d36d4e8805a",
    "banana/ida/banana_test_data_4.asc.gz": "cb5777ba76ed76f082064749eecd1dcd99942a036cf276c20f0e78b109b73a06",
    "banana/ida/banana_test_data_5.asc.gz": "7b6b01a7c8af3d14912df38aecb602a3d253ba8c28418868596286033564c728",
    "banana/ida/banana_test_data_6.asc.gz": "1514d26a64c1a78b5f395e991d6fa53516c06d5c95ec8c11026e8bade364b4ce",
    "banana/ida/banana_test_data_7.asc.gz": "86f489bf7622fd93f5ba1add6ab882ebd712e897ff538de504fb4553cfe189b9",
    "banana/ida/banana_test_data_8.asc.gz": "c9e91333b92d87f004c2834a05c193a512264f229dcd6b7f041c7d93c494187e",
    "banana/ida/banana_test_data_9.asc.gz": "7c230283d1903d969a8276b178eb38d5d12bd7693228d8ae6e7ff47350f197ab",
    "banana/ida/banana_test_data_10.asc.gz": "a4602933093be82bafea8d4d6122ca052db61bcc0c6486eb5c367550533a5183",
    "banana/ida/banana_test_labels_1.asc.gz": "979ec19fc7f08a2e91f6f6d449362f83b07031c0d44a0e4c640b03ee73659e77",
    "banana/ida/banana_test_labels_2.asc.gz": "cadac2b8e56775903bdfc41cea16c9b1100f30481186451f0ef2cc05abc8dfa9",
    "banana/ida/banana_test_labels_3.asc.gz": "5025bcf145c89087d45e993a52e2ac2164510ba69c794b6eed71da75c0b6758b",
    "banana/ida/banana_test_labels_4.asc.gz": "643d5197be3eaef5ded46a2012ad919fab64ecb5cf71a495b5d03509af3a0512",
    "banana/ida/banana_test_labels_5.asc.gz": "8053fd925425fd2910f44c70e069d8061d64ba365c7b49d85249feedac3baf18",
    "banana/ida/banana_test_labels_6.asc.gz": "e64f3e9d69d0dff1c2978d582bdb614e9bb886492be83ded8e468ce43cc0cab2",
    "banana/ida/banana_test_labels_7.asc.gz": "81498af27c93554daa76d4692528e8944f2f30906dc251456ab5bf4243d52b2c",
    "banana/ida/banana_test_labels_8.asc.gz": "7b5f1398d72f6e40fdf7a86fb6e50df54252a3ccb31333e6738bb5723246c6dc",
    "banana/ida/banana_test_labels_9.asc.gz": "bfd02b92d3eae3ca318143d0e73bea32051b20ff66e439034184c3947eef5c27",
    "banana/ida/banana_test_labels_10.asc.gz": "a497365bd66c5d70de7ab144a3adb72a21697515197040f211440204b9045df2",
    "banana/ida/banana_train_data_1.asc.gz": "d9ae475e6aa77ef0faa1fdad1d9f476756cb466445a3e65c760988d8a45c1753",
    "banana/ida/banana_train_data_2.asc.gz": "7dc9394526a65658f138d5eb8c58734d009c10c6494a6b6dc9e7a4503ab57d13",
    "banana/ida/banana_train_data_3.asc.gz": "c1d12105ec229eb956b4d8d0df494e15a29a4177148eafe85ea93cfc3f575cfa",
    "banana/ida/banana_train_data_4.asc.gz": "858b4b81d2b1ea048e092b3fb0a2617ec8a681ecfd4537a56fb346ad8b573e6e",
    "banana/ida/banana_train_data_5.asc.gz": "321ea025120ee7f45d1b279aaf2bf2fb9cf39cc8ad31a5c6fe0f92a6846f1171",
    "banana/ida/banana_train_data_6.asc.gz": "e5c926d36f21829e9781130bf25c32e9333837b0d4d061fec234288e56977f68",
    "banana/ida/banana_train_data_7.asc.gz": "095f0d568169d6c6a319f354025bf19cd3fb8e276e6a319cfb414634cfb45032",
    "banana/ida/banana_train_data_8.asc.gz": "404128bd5765c89673643d7f3b78385e0ea82d1030bc7768de42eae0f0064724",
    "banana/ida/banana_train_data_9.asc.gz": "52086a294e21bb1cb960b36673a1f62518a0725f2b98c53f100e496c0eebf390",
    "banana/ida/banana_train_data_10.asc.gz": "0d2ba59a047830f9d7377a89ae63fd73f1d16b0ee459535716b0834e7ae1c101",
    "banana/ida/banana_train_labels_1.asc.gz": "d009b24035b8af68f2683a27b9e14abe20c6b0984d3647f5168ec0d5843d2f65",
    "banana/ida/banana_train_labels_2.asc.gz": "3cbcd4e9c609314c30902a8147c1b40c5f02587f178ebeeb7892f897f1779e06",
    "banana/ida/banana_train_labels_3.asc.gz": "f27cfb78f220206540f68158c7999b83e4fe1145696c79767624fbd1dea742c4",
    "banana/ida/banana_train_labels_4.asc.gz": "99f48475fb9532dd8299ab25d0dc417d6a9e0c139ea4210d32683023d80cbc75",
    "banana/ida/banana_train_labels_5.asc.gz": "56d3246a4b917aa2b53d7b7caa562b58a79c5deb895fe6de61b63a626cb81c40",
    "banana/ida/banana_train_labels_6.asc.gz": "1581b11ed49df4fa584a6df342bab1b2683b394f81f32f2456b7c6de72de4bf1",
    "banana/ida/banana_train_labels_7.asc.gz": "311abc8acf88c4865169836413d1252c7da7fd9084bb0e21ef60c9d509c146c0",
    "banana/ida/banana_train_labels_8.asc.gz": "8996054287202bf0c9256e274c5d0d856839f6008a722e887aa9a6faea9bf7bc",
    "banana/ida/banana_train_labels_9.asc.gz": "2b2ee29c4b57cb962731d5a6e8cafbdc47f40215f6cf631731ecede623b3836d",
    "banana/ida/banana_train_labels_10.asc.gz": "86f4b2847205c93c87c8c16b1d28dcdc0e018944e4dc561b71497677f34eba57",
    "bank_marketing/bank-additional-full.csv.gz": "74adfc578bf77a7ff4bb1ba4a9f8709d9e3c6907342959c2c8416847e0afb4d8",
    "breast_cancer/breast-cancer_scale": "8fe6bce62147e0715a192378d29acf839b4a8a71d75ae4c88245a3526c20a6e4",
    "image/ida/image_test_data_1.asc.gz": "76171a102e464ad922230ca128782433402406e579d905bd2056bff544a2770a",
    "image/ida/image_test_data_2.asc.gz": "d945c17d49a3c1b192ffbfacd12cc8d18365fcc476c1afb13d2ed58744a58571",
    "image/ida/image_test_data_3.asc.gz": "47f7b6c7b03408139ef01271f453bf5fcd354a1c2a02f0ceeeb40a55326cd414",
    "image/ida/image_test_data_4.asc.gz": "1931c001c797c3c993ff0afe12fde4a16f65062947a07f48eaf70fc47184bd4c",
    "image/ida/image_test_data_5.asc.gz": "9770c0a79cda265a6d168b92a07eedd8bd6e31c1ab593eb747c20a9bf4bd55ef",
    "image/ida/image_test_data_6.asc.gz": "3e50c5493e3d69af939349fca9ffe4d01b5c1410346833d5b1cc02b44f138cb8",
    "image/ida/image_test_data_7.asc.gz": "42f16385a7a20a34f8f2d123879db06066b9c4d7d2fa66b554b0a2f3c2caa949",
    "image/ida/image_test_data_8.asc.gz": "7b85ec82a3163dc223e1ecbffa06e5894155c1ff349e4ce81186a8f62d2209b4",
    "image/ida/image_test_data_9.asc.gz": "ed0b3b3520ebf8b0caca41b5d25dcd86904bf76d144852d33ad6fbb8644298d6",
    "image/ida/image_test_data_10.asc.gz": "76171a102e464ad922230ca128782433402406e579d905bd2056bff544a2770a",
    "image/ida/image_test_labels_1.asc.gz": "a1f5bd81184edf83858fb309c76f2bde24485a72eb4d62f2809758d7b38c746f",
    "image/ida/image_test_labels_2.asc.gz": "d4095f1a8eba234365105f794f7525602b1d461ddfca2fdefe089de942966093",
    "image/ida/image_test_labels_3.asc.gz": "a00bb34b4f3a13c0aef4cd6963a31021c63cbddc9a0f04d5d90cfa2fbf48b6de",
    "image/ida/image_test_labels_4.asc.gz": "87fc7b74bed48bea6888e1bb00697968bfccc5a092d47390cf227b22f616b094",
    "image/ida/image_test_labels_5.asc.gz": "487fc7ddd7382d34425854c492cf765152e93823991ef89bb6f987c2af0bb711",
    "image/ida/image_test_labels_6.asc.gz": "eca685755c4c42666678506cd5d4aa5a27c2b3d9c303c3283f97b4e4e0e67f0f",
    "image/ida/image_test_labels_7.asc.gz": "bb059a722517db612684c51493222cd29087e1388da6a1af3bb7e41f82f48c96",
    "image/ida/image_test_labels_8.asc.gz": "b7adc5bb8fef5daae2f3538260a3ecf180554c4f33fe9b928b5faa4f1d2682c6",
    "image/ida/image_test_labels_9.asc.gz": "9ea13c78e6c37ad0498ec016d1aabd7e79cbba89068d47bff6663d4165aa51d3",
    "image/ida/image_test_labels_10.asc.gz": "a1f5bd81184edf83858fb309c76f2bde24485a72eb4d62f2809758d7b38c746f",
    "image/ida/image_train_data_1.asc.gz": "e0a6caa0007001054a6d5667eea667dcf4cb20db30779c6e10eb3485e404dc6b",
    "image/ida/image_train_data_2.asc.gz": "0fa7a22e8e1aab0306fa3931779581140798f45be27c58dee0bff404281fa06b",
    "image/ida/image_train_data_3.asc.gz": "d18e18eea49578ecac842dc25dcdc4e213eb21e966149da7200f24c6e76291ef",
    "image/ida/image_train_data_4.asc.gz": "6ea0013a8eab9b1888170fb52741c82fcbbee7577f023539b0291dad85cbc190",
    "image/ida/image_train_data_5.asc.gz": "316075e24eddee644cf6c4d89135bda7ff4578b3de4ca25ec55ae3bed03d7904",
    "image/ida/image_train_data_6.asc.gz": "03b7df505e0966fcc270e3a4307d8fe4513447fc9255ecb88d3b92863e601773",
    "image/ida/image_train_data_7.asc.gz": "3cc028a75823a546683b242e3095fdfa4554c340965a98ab3edf0655d3106f41",
    "image/ida/image_train_data_8.asc.gz": "097cea5e481ea7bb356509a5f9a2d5b06a33ceebaef7747b2f356fa796504a97",
    "image/ida/image_train_data_9.asc.gz": "1b611381905fdadafb904ce5352e6cce6424cf343bf2e66a0e2f5252f920a1ca",
    "image/ida/image_train_data_10.asc.gz": "e0a6caa0007001054a6d5667eea667dcf4cb20db30779c6e10eb3485e404dc6b",
    "image/ida/image_train_labels_1.asc.gz": "78f067b53e54345d44812e342c4ac643ccde10165c444280a7b6c17dc4d8c524",
    "image/ida/image_train_labels_2.asc.gz": "53ae082e2b4f71ec8a956f6574e20da4d31f4a38fd3504011031e7e99a1a01f4",
    "image/ida/image_train_labels_3.asc.gz": "6a078061a0c967c24773e48397fad292fc5382127b74240b7b33c586cc34b918",
    "image/ida/image_train_labels_4.asc.gz": "e60a5566bb7bac736b9a71a28d465381caa84af297ce86544c199360905a5285",
    "image/ida/image_train_labels_5.asc.gz": "a72ad3c4c7c7a20c68ce31e8e25b136a2d6fbfbc954c5cb9af77a707efcec202",
    "image/ida/image_train_labels_6.asc.gz": "79230f0ab8329a260cee59a1dee83885e96033c30a904a7d82cfe2bab29d6fc8",
    "image/ida/image_train_labels_7.asc.gz": "c26d8407c58f2cbd94354db86127a54de93ae8f6c1b13f5c9665f10858fb03f4",
    "image/ida/image_train_labels_8.asc.gz": "704e2b995228b1b76ca15f0f6b2f0ba9822918b665ff485c252e87f25a343c76",
    "image/ida/image_train_labels_9.asc.gz": "09079f0c0776e5edc2f637765b4d5b82f62255d1b40759709add810060f5846d",
    "image/ida/image_train_labels_10.asc.gz": "78f067b53e54345d44812e342c4ac643ccde10165c444280a7b6c17dc4d8c524",
    "mnist/t10k-images-idx3-ubyte.gz": "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
    "mnist/t10k-labels-idx1-ubyte.gz": "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
    "mnist/train-images-idx3-ubyte.gz": "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
    "mnist/train-labels-idx1-ubyte.gz": "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
    "mushrooms/mushrooms.txt.gz": "eb26424a54203ca9e8956ff3e5b10e613dfc3587f65d21bdbdbc28020fd995e0",
    "parkinson_speech/train_data.txt": "eb1cec4315f2b35b89aed015ee867eefa60d7b71aa333fb694b377f54137b84c",
    "skin_nonskin/Skin_NonSkin.txt.gz": "e30c0a845385dcc95a45c45ed263465674a49638e98ef740afd520769c7714a4",
    "splice/splice.txt.gz": "321beb218f0fe9d5bb6ff09abb94f33a0f21cde5f79887b46d124b9bddd4f940",
    "waveform/ida/waveform_test_data_1.asc.gz": "e16e07f1e6f8ed6768fb13b06671c0c6063560406d2fc0e7f4f5451e67fc2a7e",
    "waveform/ida/waveform_test_data_2.asc.gz": "96dd70f08c200060eaf94d37e03b883a16e89d33ef07050e1c59ca7180f49743",
    "waveform/ida/waveform_test_data_3.asc.gz": "e4c5b6aa43cd705ea813591149c341ffca22a0d977c8f0cb9ed2600a85468b93",
    "waveform/ida/waveform_test_data_4.asc.gz": "fca4a9e3ce614a8461de5da108ddee85341a5b026ba4e11ad4f13f7b8eea5c8a",
    "waveform/ida/waveform_test_data_5.asc.gz": "1443c462eea896e5b1a908607c41639c766c73686fd8cd9b29115bf9e7f364b1",
    "waveform/ida/waveform_test_data_6.asc.gz": "086dede4f9c44949ee4a27bc33aa9fbd0f7f1c43d352db22ffe995b070e0704c",
    "waveform/ida/waveform_test_data_7.asc.gz": "4e4e5a246ee1e27450e69c2a10e482fe6f423e0380ae6ef479c43d36b419a999",
    "waveform/ida/waveform_test_data_8.asc.gz": "c9cb4a80034e255e0d25506b21ba9e1695d7bb79c0b78bfc8ef08ec4b9d4e1af",
    "waveform/ida/waveform_test_data_9.asc.gz": "ee5513154c4d0d815a485809f7fb0f8b61904991c81f5a729240995173e117b3",
    "waveform/ida/waveform_test_data_10.asc.gz": "dd1ed1c866be795680e677d338c904e0b5e5c43171643f9c2d8b1820e4a4e783",
    "waveform/ida/waveform_test_labels_1.asc.gz": "211d973e19911c9d35f0a64905cd0b0c797e9da7ab99c74f68eabd860eb03794",
    "waveform/ida/waveform_test_labels_2.asc.gz": "c0360c3209a9ee45d0898538cf9f9da1e92cd2c977f0177773ffe26d3968a4d1",
    "waveform/ida/waveform_test_labels_3.asc.gz": "327d7c4540b330b39c1b0bbd6376602c66676127d650104d0fadb1a34bc8cf5b",
    "waveform/ida/waveform_test_labels_4.asc.gz": "0f71fe639c7dfab6e47894ea364eade0103dee74fe7d822f6d3969f9472f787e",
    "waveform/ida/waveform_test_labels_5.asc.gz": "ad45df551439000e7b9500ce598116ca0fe12df6ca3db2e1b487cc06e6442b21",
    "waveform/ida/waveform_test_labels_6.asc.gz": "49db0a15c45b39fe63826a27a540122d93d2e8ae2d3a1660c4fe1d6626b8bdc4",
    "waveform/ida/waveform_test_labels_7.asc.gz": "79fa10687da20bad413849375489990503d93ad8a98d4d3ec93d88ce56d0c4df",
    "waveform/ida/waveform_test_labels_8.asc.gz": "fa0b73faf5750420ee16a1da4063ab7765451df560a62416f37e9f3cec98ea9c",
    "waveform/ida/waveform_test_labels_9.asc.gz": "2387b9739ccc384ae095feee18d6e206542dfe2f2a906a2703409b257aea3dd1",
    "waveform/ida/waveform_test_labels_10.asc.gz": "4ebda49eeecd25256f07fb2b3764dd922523fded665f4d376c98c0259c277e89",
    "waveform/ida/waveform_train_data_1.asc.gz": "95d3bf737b404c5cb8c35d78ef13230af719aeab1eff34e5b81512572d9deb14",
    "waveform/ida/waveform_train_data_2.asc.gz": "b5c4fa1f8ed20d63f65ba4a9d163d37eb7bff8c0a2808656340c7fc73ed654db",
    "waveform/ida/waveform_train_data_3.asc.gz": "dda9d14d92aa5b97b8c57476e2104ee26b7b5717b35fe6ed49b733cf3e4bf258",
    "waveform/ida/waveform_train_data_4.asc.gz": "1d106932c5e89fb57d0ee5989248a12ca41e0c711e36224d9c04714ede4a1263",
    "waveform/ida/waveform_train_data_5.asc.gz": "c8db5efd8f8cd9466d2f9ea6887e4cd87e843198a1f08538909d57d5538d077b",
    "waveform/ida/waveform_train_data_6.asc.gz": "17ce5e807a9fce381498bb3df482ff5560fb27fa28fd9778796c4a9ac3271ad9",
    "waveform/ida/waveform_train_data_7.asc.gz": "eb64691028ca26eb39e9b027cd992801e147663136f2083ad64b687b3bc91542",
    "waveform/ida/waveform_train_data_8.asc.gz": "299fcde02ab8ba7692142bb624891cdf855a8ea5d0b3b20ca3c4556f06cd5189",
    "waveform/ida/waveform_train_data_9.asc.gz": "f85fbb9f6441e6e9b052ea27ba6bc8e997dae76784cb9caaa0a3ed763724f2a7",
    "waveform/ida/waveform_train_data_10.asc.gz": "686881eb13577daa6867bb451aa8a981c90b1e9de357d9de8c323e8456b64766",
    "waveform/ida/waveform_train_labels_1.asc.gz": "5147bbd2ad8d36c5fffac0f1b89f7004a174651dc80bfa753f31a17e9283831d",
    "waveform/ida/waveform_train_labels_2.asc.gz": "0051604837e74c9c58850d1fe2bde1115a0d5b9b0ee5599e4cd31500ce23085b",
    "waveform/ida/waveform_train_labels_3.asc.gz": "a553a1fa86c4c469d4a35411e37f026c4572ade29b02c9bbbb48c9e0802881bf",
    "waveform/ida/waveform_train_labels_4.asc.gz": "6621d09349d3997a47d9a25c5cbe67a6576455d86a7082bb8ea7edbeb2cca7c9",
    "waveform/ida/waveform_train_labels_5.asc.gz": "fa61acbefd172605e611bc7297824dfd027564d480e124db1ab93e7bca2d20ce",
    "waveform/ida/waveform_train_labels_6.asc.gz": "4e246a9271fb546a329816460c7d90285fa9a46b3a823db666ca4468843044be",
    "waveform/ida/waveform_train_labels_7.asc.gz": "a29475422933971a03e404be24e63267fd4ac8a1266df6f6e94dc7aedb1f23bd",
    "waveform/ida/waveform_train_labels_8.asc.gz": "3c7a6d3ff75dc05f64e10dc8d6b1c3087a966a909b5ce582efbda68a3624a4e0",
    "waveform/ida/waveform_train_labels_9.asc.gz": "b66fb14e56f1c541b4177f791ebae88a773e0237d209f268c53888a2e5def2b3",
    "waveform/ida/waveform_train_labels_10.asc.gz": "b4ff92c53fbe929654fb702fac5cab846a74591a82d895872aedbe19ffb9ba91",
}
# fmt: on

# ------------------------------------------------------------------------------------------
# sources
# ------------------------------------------------------------------------------------------
_LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/"
_MNIST_MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
    "http://yann.lecun.com/exdb/mnist/",
)


def _github(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


_IDA_REPO = ("fernando2393/Relevance-Vector-Machine", "4692830b9a8cf938e6b319be4a42e2a3ddde5457")
_TSIM = ("ambroiseodt/tsim", "c80abbd765cdaa57ad2b598583251850ded28e62")
_SOL = ("LIBOL/SOL", "37f2b02a11823eabae2624997a3ee0094e4198b8")
_KELAS = ("kelas/mnist", "283b387221ab46655e600cfcc25d843bb14292b9")
_BANK_MEMBER = "#member=bank-additional/bank-additional-full.csv"


def _spec(relpath: str, urls: tuple[str, ...], note: str = "") -> FileSpec:
    return FileSpec(relpath=relpath, sha256=PINNED_SHA256[relpath], urls=urls, note=note)


#: Every pinned file: relpath -> FileSpec.
FILES: dict[str, FileSpec] = {}


def _add(spec: FileSpec) -> FileSpec:
    FILES[spec.relpath] = spec
    return spec


BREAST_CANCER = _add(_spec(
    "breast_cancer/breast-cancer_scale",
    (_github("saipurumandla/Privacy-Preserving-Methods-for-Outsourced-Computation",
             "3fdf6e5a4ef8854e244dbc79da8737a2b7ca3448", "breast-cancer_scale"),
     _LIBSVM + "breast-cancer_scale"),
    "LIBSVM breast-cancer_scale with labels rewritten 2 -> -1, 4 -> +1 by the uploader; "
    "LIBSVM's own file (labels 2/4) has a different sha256 and fails verification.",
))
MUSHROOMS = _add(_spec(
    "mushrooms/mushrooms.txt.gz",
    (_github(*_TSIM, "data/mushrooms.txt"), _LIBSVM + "mushrooms"),
    "LIBSVM mushrooms with CRLF line ends and no final newline; the LIBSVM page's copy "
    "(LF) has a different sha256 and fails verification.",
))
SKIN = _add(_spec(
    "skin_nonskin/Skin_NonSkin.txt.gz",
    (_UCI + "00229/Skin_NonSkin.txt",
     _github("victusfate/scatter3D", "9d313c652b90166aa71e4e634ceb43d72fbf7333",
             "Skin_NonSkin.txt")),
    "UCI Skin Segmentation, tab separated, CRLF.",
))
SPLICE = _add(_spec(
    "splice/splice.txt.gz",
    (_github(*_TSIM, "data/splice.txt"),),
    "LIBSVM splice (1000 rows) followed by splice.t (2175 rows) in one file; LIBSVM's page "
    f"ships them separately ({_LIBSVM}splice, {_LIBSVM}splice.t).",
))
A1A = _add(_spec("adult_a1a/a1a", (_LIBSVM + "a1a", _github(*_SOL, "data/a1a"))))
A1A_T = _add(_spec("adult_a1a/a1a.t.gz", (_LIBSVM + "a1a.t", _github(*_SOL, "data/a1a.t"))))
MNIST_FILES = {
    key: _add(_spec(
        f"mnist/{fname}",
        tuple(m + fname for m in _MNIST_MIRRORS)
        + ((_github(*_KELAS, fname),) if key != "train_images" else ()),
        "LeCun/Cortes/Burges MNIST; the checksum is over the idx bytes, so any mirror's gzip "
        "validates.",
    ))
    for key, fname in (
        ("train_images", "train-images-idx3-ubyte.gz"),
        ("train_labels", "train-labels-idx1-ubyte.gz"),
        ("test_images", "t10k-images-idx3-ubyte.gz"),
        ("test_labels", "t10k-labels-idx1-ubyte.gz"),
    )
}
PARKINSON = _add(_spec(
    "parkinson_speech/train_data.txt",
    (_github("heis-en-berg/COMP6321", "7784acab5d1048c310356565f3604c61f3e9e74b",
             "Regression/ParkinsonSpeech/data/train_data.txt"),),
    "UCI Parkinson Speech Dataset with Multiple Types of Sound Recordings (Sakar et al. 2013); "
    "UCI ships it inside a .rar archive (" + _UCI + "00301/), which the standard library cannot "
    "open, so the byte-identical public copy is the download source.",
))
BANK = _add(_spec(
    "bank_marketing/bank-additional-full.csv.gz",
    (_UCI + "00222/bank-additional.zip" + _BANK_MEMBER,
     _github("jamjewel/Customer-Subscription", "de9b5b6384b599c5b00de2116b08be2bc740188c",
             "bank-additional.zip") + _BANK_MEMBER),
    "UCI Bank Marketing (Moro et al. 2014), member bank-additional-full.csv of "
    "bank-additional.zip, stored gzip-compressed.",
))

IDA_REALIZATIONS = tuple(range(1, 11))
_IDA_FOLDERS = {"waveform": "waveform", "banana": "banana", "image": "image"}
IDA_FILES: dict[str, tuple[FileSpec, ...]] = {
    stem: tuple(
        _add(_spec(rel, (_github(*_IDA_REPO, f"Classification/datasets/{stem}/"
                                 + rel.rsplit("/", 1)[1].removesuffix(".gz")),),
                   "IDA benchmark (Raetsch) realization file; only realizations 1-10 are pinned."))
        for r in IDA_REALIZATIONS
        for rel in ida_relpaths(folder, stem, r).values()
    )
    for stem, folder in _IDA_FOLDERS.items()
}


# ------------------------------------------------------------------------------------------
# data set specifications
# ------------------------------------------------------------------------------------------
Builder = Callable[[SourceFiles, int, "int | None"], RawSplit]


@dataclass(frozen=True)
class DatasetSpec:
    """One data set of the study.

    Attributes
    ----------
    name : str
    n_train, n_test : int
        Sizes of experiments.md (checked when a split is built).
    d : int
        Paper's feature count (gamma = 1 / d).
    n_features : int
        Columns of X (784 for MNIST, d otherwise).
    split_rule : str
        Human-readable split rule.
    positive_class : str
        What label +1 means.
    files : tuple of FileSpec
        Every pinned file of the data set (all 10 realizations for IDA sets).
    builder : callable (SourceFiles, seed, realization) -> RawSplit
    realizations : tuple of int
        Available IDA realizations (empty for other sets).
    uses_seed : bool
        Whether the split (or the data) depends on ``seed``.
    has_scores : bool
        Whether the split carries importance scores (Experiment 2).
    synthetic : bool
    """

    name: str
    n_train: int
    n_test: int
    d: int
    n_features: int
    split_rule: str
    positive_class: str
    files: tuple[FileSpec, ...] = field(repr=False)
    builder: Builder = field(repr=False, compare=False)
    realizations: tuple[int, ...] = ()
    uses_seed: bool = False
    has_scores: bool = False
    synthetic: bool = False

    def files_for(self, realization: int | None = None) -> tuple[FileSpec, ...]:
        """Files needed for ``realization`` (all files when None or when not an IDA set)."""
        if not self.realizations or realization is None:
            return self.files
        self.check_realization(realization)
        suffix = f"_{int(realization)}.asc.gz"
        return tuple(f for f in self.files if f.relpath.endswith(suffix))

    def check_realization(self, realization: int) -> None:
        if self.realizations and realization not in self.realizations:
            raise ValueError(
                f"{self.name}: realization {realization!r} is not available; the pinned IDA "
                f"files hold realizations {self.realizations[0]}-{self.realizations[-1]}"
            )


def _bind(fn: Callable[..., RawSplit], **kwargs) -> Builder:
    return functools.partial(fn, **kwargs)


def _make_fixed() -> dict[str, DatasetSpec]:
    specs: list[DatasetSpec] = [
        DatasetSpec(
            "breast_cancer", 100, 583, 10, 10,
            "LIBSVM breast-cancer_scale (683 rows, feature 1 = scaled sample id); seeded "
            "stratified random 100 train, rest test",
            "malignant", (BREAST_CANCER,),
            _bind(build_libsvm_random, relpath=BREAST_CANCER.relpath, n_features=10, n_train=100,
                  positive=(1, 4), negative=(-1, 2)),
            uses_seed=True,
        ),
        DatasetSpec(
            "mushrooms", 200, 7924, 112, 112,
            "LIBSVM mushrooms (8124 rows); seeded stratified random 200 train, rest test",
            "LIBSVM label 1 (poisonous)", (MUSHROOMS,),
            _bind(build_libsvm_random, relpath=MUSHROOMS.relpath, n_features=112, n_train=200,
                  positive=(1,), negative=(2,)),
            uses_seed=True,
        ),
    ]
    ida = {
        "waveform": (400, 4600, 21, "UCI waveform class 1"),
        "banana": (400, 4900, 2, "IDA label +1"),
        "image": (1300, 1010, 18, "IDA label +1"),
    }
    for stem in ("waveform", "banana"):
        n_tr, n_te, d, pos = ida[stem]
        specs.append(_ida_spec(stem, n_tr, n_te, d, pos))
    specs.append(DatasetSpec(
        "skin_nonskin", 500, 244557, 3, 3,
        "UCI Skin_NonSkin (245057 rows, B G R label); seeded stratified random 500 train, "
        "rest test", "skin (label 1)", (SKIN,),
        _bind(build_table_random, relpath=SKIN.relpath, delimiter="\t", n_train=500,
              positive=(1,), negative=(2,)),
        uses_seed=True,
    ))
    specs.append(DatasetSpec(
        "splice", 1000, 2175, 60, 60,
        "LIBSVM splice / splice.t: first 1000 rows / last 2175 rows of the stored file",
        "LIBSVM label +1", (SPLICE,),
        _bind(build_libsvm_head_tail, relpath=SPLICE.relpath, n_features=60, n_train=1000,
              n_test=2175),
    ))
    n_tr, n_te, d, pos = ida["image"]
    specs.append(_ida_spec("image", n_tr, n_te, d, pos))
    specs.append(DatasetSpec(
        "adult", 1605, 30956, 123, 123,
        "LIBSVM a1a (train) / a1a.t (test), 123 features", "LIBSVM label +1 (income > 50K)",
        (A1A, A1A_T),
        _bind(build_libsvm_pair, train_relpath=A1A.relpath, test_relpath=A1A_T.relpath,
              n_features=123),
    ))
    mnist_rel = {k: f.relpath for k, f in MNIST_FILES.items()}
    mnist_sizes = {
        (2, 9): (11907, 2041),
        (1, 7): (13007, 2163),
        (3, 6): (12049, 1968),
        (0, 8): (11774, 1954),
    }
    for (a, b), (n_tr, n_te) in mnist_sizes.items():
        specs.append(DatasetSpec(
            f"mnist_{a}_{b}", n_tr, n_te, 780, 784,
            f"MNIST training digits {a} and {b} / MNIST test digits {a} and {b}; all 784 pixels "
            "kept (d = 780 is the paper's count, used for gamma only)",
            f"digit {a} (digit {b} -> -1)", tuple(MNIST_FILES.values()),
            _bind(build_mnist_pair, rel=mnist_rel, positive_digit=a, negative_digit=b),
        ))
    specs.append(DatasetSpec(
        "parkinson_speech", 520, 520, 26, 26,
        "train_data.txt: subjects 1-10 and 21-30 train, 11-20 and 31-40 test; 26 acoustic "
        "features; scores = UPDRS scaled over the training patients, 1 for healthy",
        "Parkinson's (class 1)", (PARKINSON,),
        _bind(build_parkinson, relpath=PARKINSON.relpath,
              train_subjects=tuple(range(1, 11)) + tuple(range(21, 31)),
              test_subjects=tuple(range(11, 21)) + tuple(range(31, 41))),
        has_scores=True,
    ))
    specs.append(DatasetSpec(
        "bank_marketing", 300, 40888, 11, 11,
        "bank-additional-full.csv: 11 features (7 numeric, 4 boolean; duration is not one); "
        "seeded stratified random 300 train, rest test; scores = duration scaled over the "
        "training set", 'y == "yes"', (BANK,),
        _bind(build_bank, relpath=BANK.relpath, n_train=300),
        uses_seed=True, has_scores=True,
    ))
    return {s.name: s for s in specs}


def _ida_spec(stem: str, n_train: int, n_test: int, d: int, positive: str) -> DatasetSpec:
    caveat = (
        "; in the pinned copy realization 10 is byte-identical to realization 1"
        if stem == "image"
        else ""
    )
    return DatasetSpec(
        stem, n_train, n_test, d, d,
        f"IDA benchmark split, realization r ({stem}_{{train,test}}_{{data,labels}}_<r>.asc)"
        + caveat,
        positive, IDA_FILES[stem],
        _bind(build_ida, folder=_IDA_FOLDERS[stem], stem=stem),
        realizations=IDA_REALIZATIONS,
    )


_FIXED = _make_fixed()
#: The 14 data sets of experiments.md, in its order.
BENCHMARK_NAMES: tuple[str, ...] = (
    "breast_cancer", "mushrooms", "waveform", "banana", "skin_nonskin", "splice", "image",
    "adult", "mnist_2_9", "mnist_1_7", "mnist_3_6", "mnist_0_8", "parkinson_speech",
    "bank_marketing",
)  # fmt: skip
assert tuple(_FIXED) == BENCHMARK_NAMES
_SYNTHETIC_LISTED = tuple(ringnorm_name(d, l) for d in RINGNORM_DIMS for l in RINGNORM_SIZES)


@functools.lru_cache(maxsize=256)
def _ringnorm_spec(d: int, l: int) -> DatasetSpec:
    def builder(src: SourceFiles | None, seed: int, realization: int | None) -> RawSplit:
        return build_ringnorm(d, l, seed)

    return DatasetSpec(
        ringnorm_name(d, l), l, N_TEST, d, d,
        f"synthetic (Experiment 6): {l} training points from seed, {N_TEST} test points from a "
        "seed derived from it; positive N(1_d, I) prior 0.3, negative N(0, 4I) prior 0.7",
        "the N(1_d, I) class", (), builder, uses_seed=True, synthetic=True,
    )


class _Registry(Mapping[str, DatasetSpec]):
    """Read-only mapping name -> DatasetSpec (see the module docstring)."""

    def __getitem__(self, name: str) -> DatasetSpec:
        if not isinstance(name, str):
            raise UnknownDatasetError(f"data set names are strings, got {name!r}")
        if name in _FIXED:
            return _FIXED[name]
        parsed = parse_ringnorm_name(name)
        if parsed is not None:
            return _ringnorm_spec(*parsed)
        raise UnknownDatasetError(
            f"unknown data set {name!r}; known: {', '.join(BENCHMARK_NAMES)} and "
            "ringnorm_d<d>_l<l> (e.g. ringnorm_d20_l1024)"
        )

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in _FIXED or parse_ringnorm_name(name) is not None)

    def __iter__(self) -> Iterator[str]:
        yield from BENCHMARK_NAMES
        yield from _SYNTHETIC_LISTED

    def __len__(self) -> int:
        return len(BENCHMARK_NAMES) + len(_SYNTHETIC_LISTED)

    def __repr__(self) -> str:
        return f"<data set registry: {len(BENCHMARK_NAMES)} benchmark + ringnorm_d<d>_l<l>>"


DATASETS: Mapping[str, DatasetSpec] = _Registry()


def list_datasets() -> list[str]:
    """The 14 benchmark names (experiments.md order), then ringnorm_d{20,40,80}_l{128..16384}."""
    return list(DATASETS)


def get_spec(name: str) -> DatasetSpec:
    """``DATASETS[name]`` (raises :class:`UnknownDatasetError`)."""
    return DATASETS[name]


def dataset_checksums(name: str, realization: int | None = None) -> dict[str, str]:
    """Pinned sha256 of a data set's files: relpath -> hex digest (decompressed content).

    For IDA sets, ``realization=None`` gives the files of all realizations and an integer the
    four files of that realization. Synthetic sets have no files (empty dict).
    """
    spec = DATASETS[name]
    return {f.relpath: f.sha256 for f in spec.files_for(realization)}
