"""PDEBench's published files on DaRUS (the University of Stuttgart's data repository).

``PDEBENCH_FILES`` maps each file name to its download URL, the folder PDEBench's own downloader
puts it in, and its MD5, as listed in PDEBench's ``pdebench/data_download/pdebench_data_urls.csv``
(github.com/pdebench/PDEBench, commit 9754b4c of 2025-05-15; 375 files). PDEBench publishes
MD5s, not SHA-256s, and sizes only per PDE (``data_download/README.md``; kept here in
``PDEBENCH_PDE_SIZES``); ``size`` is filled where a PDE is a single file.

``download_pdebench(name, root)`` fetches a file (or every file of a PDE) with
:func:`datasets.download`, verifying the MD5::

    paths = datasets.pde.download_pdebench("1D_Burgers_Sols_Nu0.1.hdf5", "data/")
    with datasets.pde.open_pdebench(paths[0]) as f: ...
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..download import download

__all__ = ["PDEBENCH_FILES", "PDEBENCH_PDE_SIZES", "PDEBenchFileInfo", "download_pdebench"]

DARUS_DATAFILE = "https://darus.uni-stuttgart.de/api/access/datafile/"

# Total size of each PDE's files, as PDEBench's data_download/README.md states them (bytes,
# decimal units as written there: "47 GB" -> 47e9).
PDEBENCH_PDE_SIZES: dict[str, int] = {
    "advection": 47 * 10**9,
    "burgers": 93 * 10**9,
    "1d_cfd": 88 * 10**9,
    "diff_sorp": 4 * 10**9,
    "1d_reacdiff": 62 * 10**9,
    "2d_reacdiff": 13 * 10**9,
    "2d_cfd": 551 * 10**9,
    "3d_cfd": 285 * 10**9,
    "darcy": 6_200_000_000,
    "ns_incom": 2_300 * 10**9,
    "swe": 6_200_000_000,
}


@dataclass(frozen=True)
class PDEBenchFileInfo:
    """One published PDEBench file.

    Attributes:
        pde: PDEBench's PDE name, lower case (``"burgers"``, ``"2d_cfd"``, ``"ns_incom"``...).
        filename: the file's name (``"1D_Burgers_Sols_Nu0.1.hdf5"``).
        url: its DaRUS download URL.
        folder: the folder under the data root PDEBench's downloader uses
            (``"1D/Burgers/Train/"``).
        md5: its published MD5 (32 hex digits).
        size: its size in bytes where known (PDEs published as one file), else ``None``.
    """

    pde: str
    filename: str
    url: str
    folder: str
    md5: str
    size: int | None = None


# PDE, file name, DaRUS datafile id, folder, MD5 (from pdebench_data_urls.csv).
_TABLE = """
Advection,1D_Advection_Sols_beta0.1.hdf5,255672,1D/Advection/Train/,b4be2fc3383f737c76033073e6d2ccfb
Advection,1D_Advection_Sols_beta0.2.hdf5,255671,1D/Advection/Train/,d47b52c1be4b6bcaa8748a8df2f5fbb8
Advection,1D_Advection_Sols_beta0.4.hdf5,255674,1D/Advection/Train/,d595bbfd2c659df995a93cd40d6ea568
Advection,1D_Advection_Sols_beta0.7.hdf5,255666,1D/Advection/Train/,f89030c240a1e90b55649776854a84c2
Advection,1D_Advection_Sols_beta1.0.hdf5,255675,1D/Advection/Train/,1fe41923a4123db55bf4e89bea32e142
Advection,1D_Advection_Sols_beta2.0.hdf5,255677,1D/Advection/Train/,0e9beff98693089c38e213a1f2b9ac43
Advection,1D_Advection_Sols_beta4.0.hdf5,255676,1D/Advection/Train/,a87b03ff425496360e2732921805f47d
Advection,1D_Advection_Sols_beta7.0.hdf5,255664,1D/Advection/Train/,72a286ad2fcba574bd20bc045ba82d58
Burgers,1D_Burgers_Sols_Nu0.001.hdf5,268190,1D/Burgers/Train/,44cb784d5a07aa2b1c864cabdcf625f9
Burgers,1D_Burgers_Sols_Nu0.002.hdf5,268193,1D/Burgers/Train/,edf1cd13622d151dfde3e4e5af7a95b4
Burgers,1D_Burgers_Sols_Nu0.004.hdf5,268191,1D/Burgers/Train/,435e1fecb8a64a0b4563bb8d09f81c33
Burgers,1D_Burgers_Sols_Nu0.01.hdf5,281363,1D/Burgers/Train/,e6d9a4f62baf9a29121a816b919e2770
Burgers,1D_Burgers_Sols_Nu0.02.hdf5,268189,1D/Burgers/Train/,7c8c717a3a7818145877baa57106b090
Burgers,1D_Burgers_Sols_Nu0.04.hdf5,281362,1D/Burgers/Train/,16f4c7afaf8c16238be157e54c9297c7
Burgers,1D_Burgers_Sols_Nu0.1.hdf5,268185,1D/Burgers/Train/,660ba1008d3843bf4e28d2895eb607ce
Burgers,1D_Burgers_Sols_Nu0.2.hdf5,268187,1D/Burgers/Train/,01d9333254dff2f3cad090b61f5cf695
Burgers,1D_Burgers_Sols_Nu0.4.hdf5,268192,1D/Burgers/Train/,58327a6107e8f9defb5075677cc42533
Burgers,1D_Burgers_Sols_Nu1.0.hdf5,281365,1D/Burgers/Train/,9021eba35332d127306f11ef84c1a60f
Burgers,1D_Burgers_Sols_Nu2.0.hdf5,281364,1D/Burgers/Train/,70fe0c24d9313e70f6059e5212bdb3d7
Burgers,1D_Burgers_Sols_Nu4.0.hdf5,268188,1D/Burgers/Train/,8af7f70166c00ffad377c80fa477d81f
1D_CFD,1D_CFD_Rand_Eta0.01_Zeta0.01_periodic_Train.hdf5,164672,1D/CFD/Train/,2fdd00138f1d7abc794fb953021a9f43
1D_CFD,1D_CFD_Rand_Eta0.1_Zeta0.1_periodic_Train.hdf5,164668,1D/CFD/Train/,45655bd77d006ab539c52b7fbcf099b9
1D_CFD,1D_CFD_Rand_Eta1.e-8_Zeta1.e-8_periodic_Train.hdf5,135485,1D/CFD/Train/,ad22fe08b8abc721179dbb34f2cc8b2a
1D_CFD,1D_CFD_Rand_Eta1.e-8_Zeta1.e-8_trans_Train.hdf5,133155,1D/CFD/Train/,79857a11ad9a69d77b8cf249a1c72d06
1D_CFD,1D_CFD_Shock_Eta1.e-8_Zeta1.e-8_trans_Train.hdf5,133156,1D/CFD/Train/,08dffc3d84033c7574a70614703dd753
1D_CFD,Sod1.hdf5,133145,1D/CFD/Test/ShockTube/,ef8271ce332b986e961a7aaedcae24e7
1D_CFD,Sod2.hdf5,133146,1D/CFD/Test/ShockTube/,10e47c5c6ee0d1028f912a52bbf613d0
1D_CFD,Sod3.hdf5,133147,1D/CFD/Test/ShockTube/,495f2d2e0cee9b4ae28d7fef29bb7c68
1D_CFD,Sod4.hdf5,133148,1D/CFD/Test/ShockTube/,544399b3d05ae514d66fc96982ee9db8
1D_CFD,Sod5.hdf5,133149,1D/CFD/Test/ShockTube/,ca7fa6631201e8bd506914d3b0b9fe50
1D_CFD,Sod6.hdf5,133150,1D/CFD/Train/ShockTube/,adb2d95bf0d48e03bc0d8f4a2cbcd1c6
1D_CFD,Sod7.hdf5,133151,1D/CFD/Test/ShockTube/,b8d73e1e3ef862ef732a5fa43c64612e
Diff_Sorp,1D_diff-sorp_NA_NA.h5,133020,1D/diffusion-sorption/,9d466d1213065619d087319e16d9a938
1D_ReacDiff,ReacDiff_Nu0.5_Rho1.0.hdf5,133177,1D/ReactionDiffusion/Train/,69a429239778d529cd419ed5888ea835
1D_ReacDiff,ReacDiff_Nu0.5_Rho10.0.hdf5,133178,1D/ReactionDiffusion/Train/,ff7c724b18e7ebe02e19c179852f48ee
1D_ReacDiff,ReacDiff_Nu0.5_Rho2.0.hdf5,133179,1D/ReactionDiffusion/Train/,ac907daa7e483d203a5c77567cdea561
1D_ReacDiff,ReacDiff_Nu0.5_Rho5.0.hdf5,133180,1D/ReactionDiffusion/Train/,fb149e7540d8977af158bb8fec1048a3
1D_ReacDiff,ReacDiff_Nu1.0_Rho1.0.hdf5,133181,1D/ReactionDiffusion/Train/,bd73c2f3448d03e95e98c3831fc8fa70
1D_ReacDiff,ReacDiff_Nu1.0_Rho10.0.hdf5,133182,1D/ReactionDiffusion/Train/,a94e65631881a27ddae3ef74caf53093
1D_ReacDiff,ReacDiff_Nu1.0_Rho2.0.hdf5,133183,1D/ReactionDiffusion/Train/,112c01a76447162bd67c8c1073f58ca2
1D_ReacDiff,ReacDiff_Nu1.0_Rho5.0.hdf5,133184,1D/ReactionDiffusion/Train/,fa224c9d143de37ac6914d391e70f425
1D_ReacDiff,ReacDiff_Nu2.0_Rho1.0.hdf5,133185,1D/ReactionDiffusion/Train/,925a7e2c9b9e40ad2dd44b7002ec882b
1D_ReacDiff,ReacDiff_Nu2.0_Rho10.0.hdf5,133186,1D/ReactionDiffusion/Train/,a3e25a9fb8a99f010352ad3dd1afd596
1D_ReacDiff,ReacDiff_Nu2.0_Rho2.0.hdf5,133187,1D/ReactionDiffusion/Train/,426353b241acfbc64067acb1bdc80ade
1D_ReacDiff,ReacDiff_Nu2.0_Rho5.0.hdf5,133188,1D/ReactionDiffusion/Train/,f2890bdac5103a3b78fac5f80e57b760
1D_ReacDiff,ReacDiff_Nu5.0_Rho1.0.hdf5,133189,1D/ReactionDiffusion/Train/,0ed75b55f61bec11c47d379e34959e54
1D_ReacDiff,ReacDiff_Nu5.0_Rho10.0.hdf5,133190,1D/ReactionDiffusion/Train/,264c80af0e2a6cc1f70e87275e0f6ac4
1D_ReacDiff,ReacDiff_Nu5.0_Rho2.0.hdf5,133191,1D/ReactionDiffusion/Train/,f927f5d85f2e9bd97dff31b4dab051ae
1D_ReacDiff,ReacDiff_Nu5.0_Rho5.0.hdf5,133192,1D/ReactionDiffusion/Train/,c9c26e2b5f2d4bf5bcbbd4ba34fefd5e
1D_ReacDiff,ReacDiff_react_Nu0.5_Rho1.0.hdf5,133157,1D/ReactionDiffusion/Test/,6dc95d36e7126c104c5316485670f2c0
1D_ReacDiff,ReacDiff_react_Nu0.5_Rho10.0.hdf5,133158,1D/ReactionDiffusion/Test/,5bf21fbc428ac4346c0e7a04a5899f9b
1D_ReacDiff,ReacDiff_react_Nu0.5_Rho2.0.hdf5,133159,1D/ReactionDiffusion/Test/,5198a1572c201657dc19ad8592e24ac1
1D_ReacDiff,ReacDiff_react_Nu0.5_Rho5.0.hdf5,133160,1D/ReactionDiffusion/Test/,9968701e89a8b406f18ffbc2b74045d8
1D_ReacDiff,ReacDiff_react_Nu1.0_Rho1.0.hdf5,133161,1D/ReactionDiffusion/Test/,a258ff5be23d17d89cb10ac94f512165
1D_ReacDiff,ReacDiff_react_Nu1.0_Rho10.0.hdf5,133162,1D/ReactionDiffusion/Test/,09279a597860dcf48ef6f6539c46920f
1D_ReacDiff,ReacDiff_react_Nu1.0_Rho2.0.hdf5,133163,1D/ReactionDiffusion/Test/,27113922509f6336f5c8be8d99109828
1D_ReacDiff,ReacDiff_react_Nu1.0_Rho5.0.hdf5,133164,1D/ReactionDiffusion/Test/,24ab563c27bf07d653b881d3c652bfa5
1D_ReacDiff,ReacDiff_react_Nu10.0_Rho1.0.hdf5,133165,1D/ReactionDiffusion/Test/,5a0f4d1ff304b11b9b22c3b00b1f63d4
1D_ReacDiff,ReacDiff_react_Nu10.0_Rho10.0.hdf5,133166,1D/ReactionDiffusion/Test/,4cf67490b01e54f80d45c8e7936b804d
1D_ReacDiff,ReacDiff_react_Nu10.0_Rho2.0.hdf5,133167,1D/ReactionDiffusion/Test/,3c54c1cd3710b1f5b02a3de3782201ed
1D_ReacDiff,ReacDiff_react_Nu10.0_Rho5.0.hdf5,133168,1D/ReactionDiffusion/Test/,580f08d5755ee393e7092eafedb70e46
1D_ReacDiff,ReacDiff_react_Nu2.0_Rho1.0.hdf5,133169,1D/ReactionDiffusion/Test/,208882dcf594d52f8e5017904efd84c9
1D_ReacDiff,ReacDiff_react_Nu2.0_Rho10.0.hdf5,133170,1D/ReactionDiffusion/Test/,891f8b47e49348b5411882ecebbc1bfd
1D_ReacDiff,ReacDiff_react_Nu2.0_Rho2.0.hdf5,133171,1D/ReactionDiffusion/Test/,56e8e1e55ac92acf21b253511c370642
1D_ReacDiff,ReacDiff_react_Nu2.0_Rho5.0.hdf5,133172,1D/ReactionDiffusion/Test/,4498954ef4cd5c63ac530ee46c351790
1D_ReacDiff,ReacDiff_react_Nu5.0_Rho1.0.hdf5,133173,1D/ReactionDiffusion/Test/,6b2c45748711bea8779dea3b48a53a7e
1D_ReacDiff,ReacDiff_react_Nu5.0_Rho10.0.hdf5,133174,1D/ReactionDiffusion/Test/,b04c22629bf86d85929386aaf4a5f95d
1D_ReacDiff,ReacDiff_react_Nu5.0_Rho2.0.hdf5,133175,1D/ReactionDiffusion/Test/,1738e4374456af974e4d0058d3426a69
1D_ReacDiff,ReacDiff_react_Nu5.0_Rho5.0.hdf5,133176,1D/ReactionDiffusion/Test/,4e3cf0ac66e85dbb77c79861076db8e8
2D_CFD,2D_CFD_Rand_M0.1_Eta0.01_Zeta0.01_periodic_128_Train.hdf5,164687,2D/CFD/2D_Train_Rand/,5b21dcccaef4d2145ca579a71153c580
2D_CFD,2D_CFD_Rand_M0.1_Eta0.1_Zeta0.1_periodic_128_Train.hdf5,164688,2D/CFD/2D_Train_Rand/,b2733888745a1d64e36df813e979910b
2D_CFD,2D_CFD_Rand_M0.1_Eta1e-08_Zeta1e-08_periodic_512_Train.hdf5,164689,2D/CFD/2D_Train_Rand/,ae2552864d0856f58dc74132a2f95d20
2D_CFD,2D_CFD_Rand_M1.0_Eta0.01_Zeta0.01_periodic_128_Train.hdf5,164690,2D/CFD/2D_Train_Rand/,21969082d0e9524bcc4708e216148e60
2D_CFD,2D_CFD_Rand_M1.0_Eta0.1_Zeta0.1_periodic_128_Train.hdf5,164691,2D/CFD/2D_Train_Rand/,75a34f34a3dcd9bc8ae4b7adf8bf372c
2D_CFD,2D_CFD_Rand_M1.0_Eta1e-08_Zeta1e-08_periodic_512_Train.hdf5,164692,2D/CFD/2D_Train_Rand/,04fcc44c39acea69e2869b84cd653d4a
2D_CFD,2D_CFD_Turb_M0.1_Eta1e-08_Zeta1e-08_periodic_512_Train.hdf5,164685,2D/CFD/2D_Train_Turb/,844555000d342d2947162c6cf46798e7
2D_CFD,2D_CFD_Turb_M1.0_Eta1e-08_Zeta1e-08_periodic_512_Train.hdf5,164686,2D/CFD/2D_Train_Turb/,3f2c7376cde5fb072db0f9814f1c6992
2D_CFD,2D_shock.hdf5,133193,2D/CFD/Test/2DShock/,b4098c20e2e0a25cd8ee229c9294b899
2D_CFD,KH_M01_dk10_Re1e3.hdf5,133209,2D/CFD/Test/KH/,54e278b3a7419107a5cd6a8a019225d5
2D_CFD,KH_M01_dk1_Re1e3.hdf5,133210,2D/CFD/Test/KH/,29ce31d3ce61de3b90ac0b42716c061c
2D_CFD,KH_M01_dk2_Re1e3.hdf5,133211,2D/CFD/Test/KH/,de0b2a3343de028e4c162723ec571713
2D_CFD,KH_M01_dk5_Re1e3.hdf5,133212,2D/CFD/Test/KH/,5bcaed9eb7db5fd55d51f7347a938413
2D_CFD,KH_M02_dk1_Re1e3.hdf5,133213,2D/CFD/Test/KH/,fbc392f83affc2224a5703dad7bda28a
2D_CFD,KH_M04_dk1_Re1e3.hdf5,133214,2D/CFD/Test/KH/,66626c935ab070a1e5df52bcf6aeccc7
2D_CFD,KH_M1_dk1_Re1e3.hdf5,133215,2D/CFD/Test/KH/,338393c118196048a38d1df731a33b0a
2D_CFD,OTVortex.hdf5,133216,2D/CFD/Test/TOV/,3b68cb29e3d1906a19ce2cb4ce71faa4
Darcy,2D_DarcyFlow_beta0.01_Train.hdf5,133217,2D/DarcyFlow/,d05c287d4c0b7d3178b0097084238251
Darcy,2D_DarcyFlow_beta0.1_Train.hdf5,133218,2D/DarcyFlow/,294f9a03a4aa16b0e386469ca8b471be
Darcy,2D_DarcyFlow_beta1.0_Train.hdf5,133219,2D/DarcyFlow/,81694ed31306ff2e5f6b76349b0b4389
Darcy,2D_DarcyFlow_beta10.0_Train.hdf5,133220,2D/DarcyFlow/,a7f23cf8011fc211b180828af39b7d1a
Darcy,2D_DarcyFlow_beta100.0_Train.hdf5,133221,2D/DarcyFlow/,7c09f3b1bb097737d3fd52ffb0c6f1c8
2D_ReacDiff,2D_diff-react_NA_NA.h5,133017,2D/diffusion-reaction/,b8d0b86064193195ddc30c33be5dc949
NS_Incom,ns_incom_inhom_2d_512-0.h5,133280,2D/NS_incom/,54109d46f9c957317bd670ddb2068ac0
NS_Incom,ns_incom_inhom_2d_512-1.h5,136439,2D/NS_incom/,e280fd3208fccb8ad5c1ff46c4796864
NS_Incom,ns_incom_inhom_2d_512-10.h5,133309,2D/NS_incom/,f497297295ce3f2ebfefd81d00de31da
NS_Incom,ns_incom_inhom_2d_512-100.h5,133267,2D/NS_incom/,fcf3b743fc82ac8706cfa85a7b259dcd
NS_Incom,ns_incom_inhom_2d_512-101.h5,133289,2D/NS_incom/,9d1cd827c95f80975d09eae0b4e6c3da
NS_Incom,ns_incom_inhom_2d_512-102.h5,133291,2D/NS_incom/,ce1f0a7a5e52bf49db43084eef367639
NS_Incom,ns_incom_inhom_2d_512-103.h5,133294,2D/NS_incom/,4e0a5f39d14745adf96655f220329550
NS_Incom,ns_incom_inhom_2d_512-104.h5,133298,2D/NS_incom/,52f59ffdef04338f2630e98e32448086
NS_Incom,ns_incom_inhom_2d_512-105.h5,133290,2D/NS_incom/,1010c2d0c807e5e355e336fe8d905067
NS_Incom,ns_incom_inhom_2d_512-106.h5,133374,2D/NS_incom/,1127b6e69bd83b128a9420ae58187729
NS_Incom,ns_incom_inhom_2d_512-107.h5,133375,2D/NS_incom/,38e676bfd97cc946cd6db2af48c487bf
NS_Incom,ns_incom_inhom_2d_512-108.h5,133376,2D/NS_incom/,0355430cc9cee8e921378eda7c1c6b84
NS_Incom,ns_incom_inhom_2d_512-109.h5,133305,2D/NS_incom/,eff2dd6e71649bb3f9f37f951bd54d63
NS_Incom,ns_incom_inhom_2d_512-11.h5,133336,2D/NS_incom/,3342616df260d3ec60fbf24dfaabf9ae
NS_Incom,ns_incom_inhom_2d_512-110.h5,133313,2D/NS_incom/,d9739419a2100b390742acf88e4548b3
NS_Incom,ns_incom_inhom_2d_512-111.h5,133318,2D/NS_incom/,ea5239ab7204d53c476f48739a4e0d78
NS_Incom,ns_incom_inhom_2d_512-112.h5,133324,2D/NS_incom/,cdaf99ff4ef69ee79ad60648a06259d7
NS_Incom,ns_incom_inhom_2d_512-113.h5,133377,2D/NS_incom/,aee8074da1cf6e19ee421a7b86caeaa3
NS_Incom,ns_incom_inhom_2d_512-114.h5,133378,2D/NS_incom/,f1b4550b00a887771e79a81c7336a4b0
NS_Incom,ns_incom_inhom_2d_512-115.h5,133379,2D/NS_incom/,0756d685a754b84337d1de7280572c85
NS_Incom,ns_incom_inhom_2d_512-116.h5,133380,2D/NS_incom/,f7c55c110dcf0aeaed03699bc0942f0d
NS_Incom,ns_incom_inhom_2d_512-117.h5,133381,2D/NS_incom/,375331e30111457028de38b89e03c404
NS_Incom,ns_incom_inhom_2d_512-118.h5,133383,2D/NS_incom/,6d2fbe4a0e32e1934d349616ca6b85d8
NS_Incom,ns_incom_inhom_2d_512-119.h5,133385,2D/NS_incom/,993112f4fe3910230005cc35099c7d59
NS_Incom,ns_incom_inhom_2d_512-12.h5,133574,2D/NS_incom/,71f407084513d7c0e93377c1b46e4bb4
NS_Incom,ns_incom_inhom_2d_512-120.h5,133386,2D/NS_incom/,f7c0b147e5b3f217a1d534f303ab52f4
NS_Incom,ns_incom_inhom_2d_512-121.h5,133441,2D/NS_incom/,785d733406eeec2694eb89769f72971b
NS_Incom,ns_incom_inhom_2d_512-122.h5,133346,2D/NS_incom/,eeb2488aa0a5d1f14069dcfaaa0da71d
NS_Incom,ns_incom_inhom_2d_512-123.h5,133442,2D/NS_incom/,57e341bea82fd33ec095e7070fd1ae38
NS_Incom,ns_incom_inhom_2d_512-124.h5,133443,2D/NS_incom/,6aba12029ab0ddb165c1c71f3b1c8f27
NS_Incom,ns_incom_inhom_2d_512-125.h5,133444,2D/NS_incom/,2b15572d1dda8048ab9713c2318d9322
NS_Incom,ns_incom_inhom_2d_512-126.h5,133303,2D/NS_incom/,56bcc085c7c0d303dedf147e6c608730
NS_Incom,ns_incom_inhom_2d_512-127.h5,133292,2D/NS_incom/,71b5191ed81e86ec68f0a7bcd6a07759
NS_Incom,ns_incom_inhom_2d_512-128.h5,133454,2D/NS_incom/,72b8110ec99098530494bbf0b64f51f7
NS_Incom,ns_incom_inhom_2d_512-129.h5,133293,2D/NS_incom/,0e2cda441dec2c19ffaefd8ad035220e
NS_Incom,ns_incom_inhom_2d_512-13.h5,133304,2D/NS_incom/,424f6d2ab607612599645442a45234cf
NS_Incom,ns_incom_inhom_2d_512-130.h5,133295,2D/NS_incom/,8a6f6b785ce64aecc9f46a31650662d0
NS_Incom,ns_incom_inhom_2d_512-131.h5,133275,2D/NS_incom/,3c4541c0ed411fdc9641b27978318ad6
NS_Incom,ns_incom_inhom_2d_512-132.h5,133296,2D/NS_incom/,3c4541c0ed411fdc9641b27978318ad6
NS_Incom,ns_incom_inhom_2d_512-133.h5,133297,2D/NS_incom/,ba2bb63092d5d0cb8fae29a0c18ff851
NS_Incom,ns_incom_inhom_2d_512-134.h5,133269,2D/NS_incom/,4b0b6e0c3d22772ea20dc4c3e07c5e7d
NS_Incom,ns_incom_inhom_2d_512-135.h5,133274,2D/NS_incom/,e48583df141230425ea36d093b0b46f6
NS_Incom,ns_incom_inhom_2d_512-136.h5,133299,2D/NS_incom/,4b0b6e0c3d22772ea20dc4c3e07c5e7d
NS_Incom,ns_incom_inhom_2d_512-137.h5,133300,2D/NS_incom/,e48583df141230425ea36d093b0b46f6
NS_Incom,ns_incom_inhom_2d_512-138.h5,133302,2D/NS_incom/,294b49a65b2fc861e23dfc40098d6e91
NS_Incom,ns_incom_inhom_2d_512-139.h5,133575,2D/NS_incom/,14c9705c20d630e08f4387cc4880a646
NS_Incom,ns_incom_inhom_2d_512-14.h5,133281,2D/NS_incom/,f8099cba29f6374b6454424ef521b86d
NS_Incom,ns_incom_inhom_2d_512-140.h5,133698,2D/NS_incom/,f8c12c7ee3973eab55a531a24689ce95
NS_Incom,ns_incom_inhom_2d_512-141.h5,133307,2D/NS_incom/,95a897a07713b654ce497b513ada21df
NS_Incom,ns_incom_inhom_2d_512-142.h5,133306,2D/NS_incom/,b0c964793163e49d46ddfa783b7f2a87
NS_Incom,ns_incom_inhom_2d_512-143.h5,133590,2D/NS_incom/,b35dd28ee302e41dd9500e65e681bd93
NS_Incom,ns_incom_inhom_2d_512-144.h5,133591,2D/NS_incom/,d7b000376bcb6cf4949e2dec4232a926
NS_Incom,ns_incom_inhom_2d_512-145.h5,133592,2D/NS_incom/,e90fad8268cf369136cebba09f3b06e8
NS_Incom,ns_incom_inhom_2d_512-146.h5,133593,2D/NS_incom/,568fac9aab2f599c20da783e9c7f3f0a
NS_Incom,ns_incom_inhom_2d_512-147.h5,133599,2D/NS_incom/,43194bdefada7b59cac975cc08e6d12d
NS_Incom,ns_incom_inhom_2d_512-148.h5,133600,2D/NS_incom/,41a78815f65ff7b607d69dd508b3ffea
NS_Incom,ns_incom_inhom_2d_512-149.h5,133601,2D/NS_incom/,3ebb3a014d7c33787cda458a689f7728
NS_Incom,ns_incom_inhom_2d_512-15.h5,133609,2D/NS_incom/,74dd42aaf8b809925ff6dce345be11fd
NS_Incom,ns_incom_inhom_2d_512-150.h5,133602,2D/NS_incom/,562bd9a0d25ce189a9635d385e3d6a3c
NS_Incom,ns_incom_inhom_2d_512-151.h5,133271,2D/NS_incom/,1acb06d08a4ae3a17ddbe04a2e3fd5cf
NS_Incom,ns_incom_inhom_2d_512-152.h5,133603,2D/NS_incom/,0023490cb7c00a4a75f9a252af9be71c
NS_Incom,ns_incom_inhom_2d_512-153.h5,133594,2D/NS_incom/,669788ec079a3e695b68821c17d79a26
NS_Incom,ns_incom_inhom_2d_512-154.h5,133604,2D/NS_incom/,547cfa5abca50bcd927630b8264d6876
NS_Incom,ns_incom_inhom_2d_512-155.h5,133605,2D/NS_incom/,f28fcf6d99c0d1f1bb08a82be94114eb
NS_Incom,ns_incom_inhom_2d_512-156.h5,133606,2D/NS_incom/,8c52c6258bdbbc7c4fe1cb7892b5bd23
NS_Incom,ns_incom_inhom_2d_512-157.h5,133607,2D/NS_incom/,91f4ab6bd4eef91ab43908290539bdab
NS_Incom,ns_incom_inhom_2d_512-158.h5,133321,2D/NS_incom/,299521efb9f871919b003e86d0e8d628
NS_Incom,ns_incom_inhom_2d_512-159.h5,133608,2D/NS_incom/,54b54c80708366c74d4aee82688be26e
NS_Incom,ns_incom_inhom_2d_512-16.h5,133311,2D/NS_incom/,b83a1465fee7f5dcb9826d1bbb4b6f71
NS_Incom,ns_incom_inhom_2d_512-160.h5,133610,2D/NS_incom/,e90d31aff2172f508846473126c78947
NS_Incom,ns_incom_inhom_2d_512-161.h5,133611,2D/NS_incom/,24b4b52f0a03dc52f7159ef10652c40a
NS_Incom,ns_incom_inhom_2d_512-162.h5,133683,2D/NS_incom/,87d592f2be6a76751b2b36e8bf0d0a88
NS_Incom,ns_incom_inhom_2d_512-163.h5,133612,2D/NS_incom/,2acf733c2833fb815487271bbb5ce66f
NS_Incom,ns_incom_inhom_2d_512-164.h5,136435,2D/NS_incom/,8470816b05ecbabd2ec6036f346d4d79
NS_Incom,ns_incom_inhom_2d_512-165.h5,133685,2D/NS_incom/,61d677b1edd03987c26648d7d136672d
NS_Incom,ns_incom_inhom_2d_512-166.h5,133308,2D/NS_incom/,4f1dd0e87f4ad925dc82444da4df7d3a
NS_Incom,ns_incom_inhom_2d_512-167.h5,133684,2D/NS_incom/,8e90f2ab307a6c5f8a2e1a3befa02d8f
NS_Incom,ns_incom_inhom_2d_512-168.h5,133701,2D/NS_incom/,1f8ef01efadb38eb638c383e242d9511
NS_Incom,ns_incom_inhom_2d_512-169.h5,133310,2D/NS_incom/,d2ae69de21cb38a24dbc174f34afeb70
NS_Incom,ns_incom_inhom_2d_512-17.h5,133325,2D/NS_incom/,9c206312c353aa6dcaa3144d53753075
NS_Incom,ns_incom_inhom_2d_512-170.h5,133312,2D/NS_incom/,d7f9e313387dfb3efc356c1d5606ebc3
NS_Incom,ns_incom_inhom_2d_512-171.h5,133679,2D/NS_incom/,f6ade3872e3e0db0d6b8af4cc9fd7ed6
NS_Incom,ns_incom_inhom_2d_512-172.h5,133314,2D/NS_incom/,986851271af43e55264a8db4229b2049
NS_Incom,ns_incom_inhom_2d_512-173.h5,133315,2D/NS_incom/,e064a3b043136572de413744f470e795
NS_Incom,ns_incom_inhom_2d_512-174.h5,133316,2D/NS_incom/,d4906a07e5e94b6e147570613205d19d
NS_Incom,ns_incom_inhom_2d_512-175.h5,133317,2D/NS_incom/,7d7230752c444c2570396927e9f9b4bf
NS_Incom,ns_incom_inhom_2d_512-176.h5,133319,2D/NS_incom/,47a59095761d69cecc886ddb3027b556
NS_Incom,ns_incom_inhom_2d_512-177.h5,133320,2D/NS_incom/,979de8be5c402f6dc50060e92ca6245a
NS_Incom,ns_incom_inhom_2d_512-178.h5,133342,2D/NS_incom/,a72fc652b38b2dc0b0aa406bb35cd676
NS_Incom,ns_incom_inhom_2d_512-179.h5,133697,2D/NS_incom/,6dd8a78a85ad7c0e03daaabcb3826fdb
NS_Incom,ns_incom_inhom_2d_512-18.h5,136437,2D/NS_incom/,272c1cdf65a90dc3e4308df8a15ef7dc
NS_Incom,ns_incom_inhom_2d_512-180.h5,133326,2D/NS_incom/,f9ffc612a7438dc17524818b48acb7ac
NS_Incom,ns_incom_inhom_2d_512-181.h5,133327,2D/NS_incom/,78ee160778aab06d0e88507944f661b4
NS_Incom,ns_incom_inhom_2d_512-182.h5,133328,2D/NS_incom/,e9a36056e3e9fe23937fbf65e0dfc16a
NS_Incom,ns_incom_inhom_2d_512-183.h5,133329,2D/NS_incom/,5107343596d93f8739b4f09926daeef7
NS_Incom,ns_incom_inhom_2d_512-184.h5,133330,2D/NS_incom/,f4a7aff84a03fff6e1958617abf373c4
NS_Incom,ns_incom_inhom_2d_512-185.h5,133331,2D/NS_incom/,f59cb88424414a28aad308499935619b
NS_Incom,ns_incom_inhom_2d_512-186.h5,133666,2D/NS_incom/,d9bc339d2d2047f8f6a369ad2e4e9357
NS_Incom,ns_incom_inhom_2d_512-187.h5,136436,2D/NS_incom/,4d0461fc34683816d5906d4809c84432
NS_Incom,ns_incom_inhom_2d_512-188.h5,133332,2D/NS_incom/,3565b7f3ab620c3716a25865670b98fb
NS_Incom,ns_incom_inhom_2d_512-189.h5,133668,2D/NS_incom/,d385ef198ae29ef5eff9aad6d129621a
NS_Incom,ns_incom_inhom_2d_512-19.h5,133335,2D/NS_incom/,f67fec4521fc9a113cd16de7f7c283ff
NS_Incom,ns_incom_inhom_2d_512-190.h5,136438,2D/NS_incom/,2dce11f971c3561083d580f7299f3e02
NS_Incom,ns_incom_inhom_2d_512-191.h5,133663,2D/NS_incom/,fda967e4ca21881b00d5c67b984d4c78
NS_Incom,ns_incom_inhom_2d_512-192.h5,133664,2D/NS_incom/,85542754064fcab3675930ac607b68e0
NS_Incom,ns_incom_inhom_2d_512-193.h5,133371,2D/NS_incom/,2f67289963f5d9d3041acf67f45a38b7
NS_Incom,ns_incom_inhom_2d_512-194.h5,133669,2D/NS_incom/,609d2d5dbd19ccdb6cee8ab67df66c38
NS_Incom,ns_incom_inhom_2d_512-195.h5,133699,2D/NS_incom/,b39dbe9518dbc19da27345ce569489e4
NS_Incom,ns_incom_inhom_2d_512-196.h5,133665,2D/NS_incom/,fc636092ce4175b3d908d156db66deb8
NS_Incom,ns_incom_inhom_2d_512-197.h5,133702,2D/NS_incom/,0b3bd457d75ccb3120f649bcdb0089f2
NS_Incom,ns_incom_inhom_2d_512-198.h5,133368,2D/NS_incom/,526cce686110114720bc9d84eb8d16ee
NS_Incom,ns_incom_inhom_2d_512-199.h5,133667,2D/NS_incom/,123272aaaf52747c39e8c32b4955390b
NS_Incom,ns_incom_inhom_2d_512-2.h5,133721,2D/NS_incom/,1d7a2aac41a410bea6c887f624273d20
NS_Incom,ns_incom_inhom_2d_512-20.h5,133283,2D/NS_incom/,859c8c8cede4fd611548af291acfa362
NS_Incom,ns_incom_inhom_2d_512-200.h5,136440,2D/NS_incom/,621c5bdf211ab8aa6d586ede4b51c5a2
NS_Incom,ns_incom_inhom_2d_512-201.h5,133367,2D/NS_incom/,89b6667026a2f289b81e48b6d75ef4d6
NS_Incom,ns_incom_inhom_2d_512-202.h5,133661,2D/NS_incom/,a70f3e38089caec832075b7c3ce86744
NS_Incom,ns_incom_inhom_2d_512-203.h5,133660,2D/NS_incom/,f0bc2659a6f671813e88409bdb08531a
NS_Incom,ns_incom_inhom_2d_512-204.h5,133671,2D/NS_incom/,c109d2aa5cf0688c5f0565b03d1e3ce0
NS_Incom,ns_incom_inhom_2d_512-205.h5,133688,2D/NS_incom/,2fa87303d667e4d50935fe26f04437b4
NS_Incom,ns_incom_inhom_2d_512-206.h5,136441,2D/NS_incom/,28a557b57ffce43cb9de4cc48642fc05
NS_Incom,ns_incom_inhom_2d_512-207.h5,133282,2D/NS_incom/,01a63c9ad30ac4d140f86bb2fa929274
NS_Incom,ns_incom_inhom_2d_512-208.h5,133340,2D/NS_incom/,d2aa05820caf6a38be4711ef797d3bf4
NS_Incom,ns_incom_inhom_2d_512-209.h5,133333,2D/NS_incom/,9e17d624a2eea451f0956f9184ce63d8
NS_Incom,ns_incom_inhom_2d_512-21.h5,133334,2D/NS_incom/,859c8c8cede4fd611548af291acfa362
NS_Incom,ns_incom_inhom_2d_512-210.h5,133703,2D/NS_incom/,fb5de2b943891ed1ec1bbb682520bc78
NS_Incom,ns_incom_inhom_2d_512-211.h5,133286,2D/NS_incom/,24f8fe56ffe24baaa03f6bf12762ef95
NS_Incom,ns_incom_inhom_2d_512-212.h5,133284,2D/NS_incom/,8e4561fe4ae69d62000df136f980fae3
NS_Incom,ns_incom_inhom_2d_512-213.h5,133285,2D/NS_incom/,d1101482e0d766334b92c4d0e11d73f3
NS_Incom,ns_incom_inhom_2d_512-214.h5,133337,2D/NS_incom/,d1101482e0d766334b92c4d0e11d73f3
NS_Incom,ns_incom_inhom_2d_512-215.h5,133287,2D/NS_incom/,f615b96dd71864673bba274240acfb12
NS_Incom,ns_incom_inhom_2d_512-216.h5,133288,2D/NS_incom/,892986d49b49b431f3f172d7baa9977b
NS_Incom,ns_incom_inhom_2d_512-217.h5,133338,2D/NS_incom/,a471e758505de149dba27c9fa2d29198
NS_Incom,ns_incom_inhom_2d_512-218.h5,133339,2D/NS_incom/,f615b96dd71864673bba274240acfb12
NS_Incom,ns_incom_inhom_2d_512-219.h5,133341,2D/NS_incom/,1965889c070e802965ebe19b01cdf2db
NS_Incom,ns_incom_inhom_2d_512-22.h5,133344,2D/NS_incom/,2235dd8e60d0d43b49aba99819ddb8d3
NS_Incom,ns_incom_inhom_2d_512-220.h5,133343,2D/NS_incom/,588ce18cf51ca3517527f3dd0b0ee443
NS_Incom,ns_incom_inhom_2d_512-221.h5,133345,2D/NS_incom/,e57ad44f1ae4fa9f31ddff57578507ce
NS_Incom,ns_incom_inhom_2d_512-222.h5,133347,2D/NS_incom/,892986d49b49b431f3f172d7baa9977b
NS_Incom,ns_incom_inhom_2d_512-223.h5,133369,2D/NS_incom/,9da97766e3b311af6d79a946f8db5184
NS_Incom,ns_incom_inhom_2d_512-224.h5,133370,2D/NS_incom/,44a864a879590427273a3dbf1aa2c190
NS_Incom,ns_incom_inhom_2d_512-225.h5,133372,2D/NS_incom/,8e4561fe4ae69d62000df136f980fae3
NS_Incom,ns_incom_inhom_2d_512-226.h5,133373,2D/NS_incom/,adf37d1dd066c2dc8fb3886369b5434f
NS_Incom,ns_incom_inhom_2d_512-227.h5,136442,2D/NS_incom/,de46866be488bb59d0d1c8ddc13a4dcb
NS_Incom,ns_incom_inhom_2d_512-228.h5,133723,2D/NS_incom/,43975b57db7c922f94703d1c63fdaebe
NS_Incom,ns_incom_inhom_2d_512-229.h5,136443,2D/NS_incom/,805f1a7336301b2bcc4a9f0fcce43864
NS_Incom,ns_incom_inhom_2d_512-23.h5,133617,2D/NS_incom/,d026b809986795e73f13368a763e56d2
NS_Incom,ns_incom_inhom_2d_512-230.h5,136445,2D/NS_incom/,e43acdfb560a45181111256e4ce45cc1
NS_Incom,ns_incom_inhom_2d_512-231.h5,133613,2D/NS_incom/,f56497f0ba427fdf9e215c885c6c1d3a
NS_Incom,ns_incom_inhom_2d_512-232.h5,133692,2D/NS_incom/,599ff6b1ea10572a829a13e5fc9c2523
NS_Incom,ns_incom_inhom_2d_512-233.h5,133614,2D/NS_incom/,b0cbda1f7435ccbe04bc6a09840624df
NS_Incom,ns_incom_inhom_2d_512-234.h5,133700,2D/NS_incom/,6331197878327890af4da21d5c4065bf
NS_Incom,ns_incom_inhom_2d_512-235.h5,133693,2D/NS_incom/,dd937dace08671e5b61a8f960d845561
NS_Incom,ns_incom_inhom_2d_512-236.h5,133615,2D/NS_incom/,07a4596a86c3099cf7f6e7e5c47b71b6
NS_Incom,ns_incom_inhom_2d_512-237.h5,133616,2D/NS_incom/,4c977f28e59fd8cc877f6d95d96011e5
NS_Incom,ns_incom_inhom_2d_512-238.h5,133695,2D/NS_incom/,9d3bad375edf84cd86a648caca49b6b5
NS_Incom,ns_incom_inhom_2d_512-239.h5,136446,2D/NS_incom/,bae42dea9f17c4ca5ec33997e3eb966f
NS_Incom,ns_incom_inhom_2d_512-24.h5,133618,2D/NS_incom/,c7e0bdab4f18748914263534cf21422d
NS_Incom,ns_incom_inhom_2d_512-240.h5,133268,2D/NS_incom/,10b14e2a9eb6fcf5a88a7a5447481aa7
NS_Incom,ns_incom_inhom_2d_512-241.h5,136447,2D/NS_incom/,0aa745b2377c49379f91f7f000d8f23e
NS_Incom,ns_incom_inhom_2d_512-242.h5,136448,2D/NS_incom/,79033da1fbd3167b560769c8292c15f4
NS_Incom,ns_incom_inhom_2d_512-243.h5,136450,2D/NS_incom/,896aa796fbf2052da573c30694744794
NS_Incom,ns_incom_inhom_2d_512-244.h5,136451,2D/NS_incom/,3063dee5e25740331b4c606939c3960e
NS_Incom,ns_incom_inhom_2d_512-245.h5,136457,2D/NS_incom/,daf18bcc864d5db453f7321de3c199bf
NS_Incom,ns_incom_inhom_2d_512-246.h5,136458,2D/NS_incom/,8f97135545fdea8eb504c6f76878b77c
NS_Incom,ns_incom_inhom_2d_512-247.h5,136459,2D/NS_incom/,2e1f4cf38135b2f07a72462e0f995c2d
NS_Incom,ns_incom_inhom_2d_512-248.h5,136460,2D/NS_incom/,edaec61956c5af7be9f8996b8498c8fd
NS_Incom,ns_incom_inhom_2d_512-249.h5,136461,2D/NS_incom/,b05738fc7cdf18fecca88361ba58875f
NS_Incom,ns_incom_inhom_2d_512-25.h5,133619,2D/NS_incom/,d5e37c12c61353533ab82c6c9e48e93f
NS_Incom,ns_incom_inhom_2d_512-250.h5,166273,2D/NS_incom/,c9731467c80b809ce0f3f337ce3ed71e
NS_Incom,ns_incom_inhom_2d_512-251.h5,166274,2D/NS_incom/,3a515e95b641360734702248b3bfcb6d
NS_Incom,ns_incom_inhom_2d_512-252.h5,166275,2D/NS_incom/,283244af2adc86953dd6021bf6722ba4
NS_Incom,ns_incom_inhom_2d_512-253.h5,166276,2D/NS_incom/,a471e758505de149dba27c9fa2d29198
NS_Incom,ns_incom_inhom_2d_512-254.h5,166277,2D/NS_incom/,9da97766e3b311af6d79a946f8db5184
NS_Incom,ns_incom_inhom_2d_512-255.h5,166278,2D/NS_incom/,1965889c070e802965ebe19b01cdf2db
NS_Incom,ns_incom_inhom_2d_512-256.h5,166279,2D/NS_incom/,588ce18cf51ca3517527f3dd0b0ee443
NS_Incom,ns_incom_inhom_2d_512-257.h5,166281,2D/NS_incom/,44a864a879590427273a3dbf1aa2c190
NS_Incom,ns_incom_inhom_2d_512-258.h5,166282,2D/NS_incom/,adf37d1dd066c2dc8fb3886369b5434f
NS_Incom,ns_incom_inhom_2d_512-259.h5,166283,2D/NS_incom/,588200460d5168ce1ba582101aa3547e
NS_Incom,ns_incom_inhom_2d_512-26.h5,133689,2D/NS_incom/,563b6261312a32460d848e5b9ca82f79
NS_Incom,ns_incom_inhom_2d_512-260.h5,166284,2D/NS_incom/,2e1e5883bec2e8e50048738266785bae
NS_Incom,ns_incom_inhom_2d_512-261.h5,166285,2D/NS_incom/,b5f6b09ad77bbcafbc7d52710388669c
NS_Incom,ns_incom_inhom_2d_512-262.h5,166286,2D/NS_incom/,8a8026b2cd2e59a7b1d796dca4404e3a
NS_Incom,ns_incom_inhom_2d_512-263.h5,166287,2D/NS_incom/,8958869c63e7a496816d5c551d4d8115
NS_Incom,ns_incom_inhom_2d_512-264.h5,166288,2D/NS_incom/,69e4911decfab00ff945884915084104
NS_Incom,ns_incom_inhom_2d_512-265.h5,166290,2D/NS_incom/,3516776e1d47d573ee91815ca70360b6
NS_Incom,ns_incom_inhom_2d_512-266.h5,166291,2D/NS_incom/,f50c0e5f4ad659c1b5d6f7343e072bdf
NS_Incom,ns_incom_inhom_2d_512-267.h5,166292,2D/NS_incom/,85a8bd3bd539acb7685393393294e916
NS_Incom,ns_incom_inhom_2d_512-268.h5,166293,2D/NS_incom/,3b43956b04c4e0e619ba671cdfbbc834
NS_Incom,ns_incom_inhom_2d_512-269.h5,166294,2D/NS_incom/,1ca4a6528b2d73b55042eb6dbe487ff1
NS_Incom,ns_incom_inhom_2d_512-27.h5,133620,2D/NS_incom/,3536aace9614abf8868d9c03bbccf9d4
NS_Incom,ns_incom_inhom_2d_512-270.h5,166295,2D/NS_incom/,8bf9ac2f7dc47e3617ba9de2ac10d582
NS_Incom,ns_incom_inhom_2d_512-271.h5,166296,2D/NS_incom/,907d7cd2c84312f52f94b27197128d00
NS_Incom,ns_incom_inhom_2d_512-272.h5,166297,2D/NS_incom/,7d1dc19e1b08c09d86bed9a0c7448ceb
NS_Incom,ns_incom_inhom_2d_512-273.h5,166298,2D/NS_incom/,e5e51712cc8921fcc4e89b9fe4690c7f
NS_Incom,ns_incom_inhom_2d_512-274.h5,166299,2D/NS_incom/,5a3ea4a7cdeade672038ffdbf3a7886a
NS_Incom,ns_incom_inhom_2d_512-28.h5,136462,2D/NS_incom/,aef3e1e349adc36e3d738d7d5534548b
NS_Incom,ns_incom_inhom_2d_512-29.h5,136463,2D/NS_incom/,b5f7a9f28aab2baf06d6129a436dca79
NS_Incom,ns_incom_inhom_2d_512-3.h5,136466,2D/NS_incom/,e9c92a19854e96c918d3a46d39994be4
NS_Incom,ns_incom_inhom_2d_512-30.h5,136464,2D/NS_incom/,fa2275aaf761334ec2d80affb10d324f
NS_Incom,ns_incom_inhom_2d_512-31.h5,133621,2D/NS_incom/,a30bc0bb2120dcb42a8335c6d264ac7d
NS_Incom,ns_incom_inhom_2d_512-32.h5,133626,2D/NS_incom/,6579fe51ea46095aa1cd336be4701b34
NS_Incom,ns_incom_inhom_2d_512-33.h5,133622,2D/NS_incom/,63ee81664764659f3b6436c055981c95
NS_Incom,ns_incom_inhom_2d_512-34.h5,133623,2D/NS_incom/,e7c32d512bf95b97699c36381fea07ca
NS_Incom,ns_incom_inhom_2d_512-35.h5,133624,2D/NS_incom/,c2715bd899018326e9679775d57e1dfd
NS_Incom,ns_incom_inhom_2d_512-36.h5,136465,2D/NS_incom/,b085ae82d91f9baa2a7f9c8720f5ca48
NS_Incom,ns_incom_inhom_2d_512-37.h5,133625,2D/NS_incom/,80c39f8aaf4168974f8bde94df177ab6
NS_Incom,ns_incom_inhom_2d_512-38.h5,133645,2D/NS_incom/,d01ee492fcdb64cd52b7d0ae7b606370
NS_Incom,ns_incom_inhom_2d_512-39.h5,133630,2D/NS_incom/,3f4f083589ab6d314584fa7ec795669e
NS_Incom,ns_incom_inhom_2d_512-4.h5,166289,2D/NS_incom/,306a56ac14ea5686921cbb3f09c7dcb6
NS_Incom,ns_incom_inhom_2d_512-40.h5,133627,2D/NS_incom/,c906a76f920bb63d575e347e76e47caf
NS_Incom,ns_incom_inhom_2d_512-41.h5,133696,2D/NS_incom/,b55a275050a22b9c515d9d896dba6da0
NS_Incom,ns_incom_inhom_2d_512-42.h5,133642,2D/NS_incom/,5aa8b626b64ba979905797b9e56dd34c
NS_Incom,ns_incom_inhom_2d_512-43.h5,133650,2D/NS_incom/,d6ef4cf80d79f696dfc34d4947b14a77
NS_Incom,ns_incom_inhom_2d_512-44.h5,133686,2D/NS_incom/,b8527daec6934026f5128a6d1f5db1e5
NS_Incom,ns_incom_inhom_2d_512-45.h5,136467,2D/NS_incom/,7899ab1897fbd4665e4d7daea7c90bc2
NS_Incom,ns_incom_inhom_2d_512-46.h5,136468,2D/NS_incom/,6853e9a78b6a2b2b756c4e6f8bcdac3e
NS_Incom,ns_incom_inhom_2d_512-47.h5,136469,2D/NS_incom/,4737e1e1283748baae9617ceff1e777a
NS_Incom,ns_incom_inhom_2d_512-48.h5,136470,2D/NS_incom/,5d3abc3ecbddeacb5270030954cc8064
NS_Incom,ns_incom_inhom_2d_512-5.h5,136471,2D/NS_incom/,6a939d7418593d70faf7f90a191f841d
NS_Incom,ns_incom_inhom_2d_512-50.h5,133678,2D/NS_incom/,f30303f48d036e9aeac07fd70e61c97b
NS_Incom,ns_incom_inhom_2d_512-51.h5,133659,2D/NS_incom/,e82c2adbbc22b59168b7b587012d296d
NS_Incom,ns_incom_inhom_2d_512-52.h5,133657,2D/NS_incom/,1a072500b92f728f24526182a8e22d71
NS_Incom,ns_incom_inhom_2d_512-53.h5,133670,2D/NS_incom/,e82c2adbbc22b59168b7b587012d296d
NS_Incom,ns_incom_inhom_2d_512-54.h5,133672,2D/NS_incom/,3516776e1d47d573ee91815ca70360b6
NS_Incom,ns_incom_inhom_2d_512-55.h5,133662,2D/NS_incom/,49732762c231a410904cf8bddb0444cd
NS_Incom,ns_incom_inhom_2d_512-56.h5,133673,2D/NS_incom/,f50c0e5f4ad659c1b5d6f7343e072bdf
NS_Incom,ns_incom_inhom_2d_512-57.h5,133674,2D/NS_incom/,1a072500b92f728f24526182a8e22d71
NS_Incom,ns_incom_inhom_2d_512-58.h5,133658,2D/NS_incom/,ae1e262d7f1a56369b13b6d5de80e03d
NS_Incom,ns_incom_inhom_2d_512-59.h5,133656,2D/NS_incom/,b99c5b112d4a7dfca053cb2c78ebe581
NS_Incom,ns_incom_inhom_2d_512-6.h5,136472,2D/NS_incom/,36156ac1f8cecb47d076a1ee0707dec5
NS_Incom,ns_incom_inhom_2d_512-60.h5,133675,2D/NS_incom/,85a8bd3bd539acb7685393393294e916
NS_Incom,ns_incom_inhom_2d_512-61.h5,133676,2D/NS_incom/,3b43956b04c4e0e619ba671cdfbbc834
NS_Incom,ns_incom_inhom_2d_512-62.h5,133677,2D/NS_incom/,8bf9ac2f7dc47e3617ba9de2ac10d582
NS_Incom,ns_incom_inhom_2d_512-63.h5,133680,2D/NS_incom/,49732762c231a410904cf8bddb0444cd
NS_Incom,ns_incom_inhom_2d_512-64.h5,133628,2D/NS_incom/,c0e54ed459c84470986818d6d89be0c8
NS_Incom,ns_incom_inhom_2d_512-65.h5,133635,2D/NS_incom/,69f1b9013bb76fba1006272951e12845
NS_Incom,ns_incom_inhom_2d_512-66.h5,133629,2D/NS_incom/,c79245b195ec850a40c0957056bffad7
NS_Incom,ns_incom_inhom_2d_512-67.h5,133277,2D/NS_incom/,f8465b71d9afe577ba30cbe5d0c490e6
NS_Incom,ns_incom_inhom_2d_512-68.h5,133681,2D/NS_incom/,ae1e262d7f1a56369b13b6d5de80e03d
NS_Incom,ns_incom_inhom_2d_512-69.h5,133631,2D/NS_incom/,b5159c70d9b14e480bb520961bafcae4
NS_Incom,ns_incom_inhom_2d_512-7.h5,136473,2D/NS_incom/,e1b06fd07d09227a0767baa260f361e2
NS_Incom,ns_incom_inhom_2d_512-70.h5,133632,2D/NS_incom/,3aee2aa9b1a14c7d04ce2770e95a354a
NS_Incom,ns_incom_inhom_2d_512-71.h5,133634,2D/NS_incom/,2f5b2bf56e72d61c41d4b056ac540fb0
NS_Incom,ns_incom_inhom_2d_512-72.h5,133682,2D/NS_incom/,b99c5b112d4a7dfca053cb2c78ebe581
NS_Incom,ns_incom_inhom_2d_512-73.h5,133273,2D/NS_incom/,9d1c5e98ee4fe97c7498d2f574c165ae
NS_Incom,ns_incom_inhom_2d_512-74.h5,133633,2D/NS_incom/,475427b7337f1fd7114b7e6c32a2f709
NS_Incom,ns_incom_inhom_2d_512-75.h5,133694,2D/NS_incom/,170b32d051ed72716aab0f40b13f359e
NS_Incom,ns_incom_inhom_2d_512-76.h5,133636,2D/NS_incom/,2666826a3944f5999a1053242e9588a9
NS_Incom,ns_incom_inhom_2d_512-77.h5,133638,2D/NS_incom/,c58cc6dd09fb89c1b5fb95081f1220c9
NS_Incom,ns_incom_inhom_2d_512-78.h5,133637,2D/NS_incom/,b183a32a3e2230968d5b7f20d9dbf818
NS_Incom,ns_incom_inhom_2d_512-79.h5,133651,2D/NS_incom/,def3145be356b7d020ea09e5232bb60f
NS_Incom,ns_incom_inhom_2d_512-8.h5,136449,2D/NS_incom/,2e6a62550680a255d4dfec24a761d5cf
NS_Incom,ns_incom_inhom_2d_512-80.h5,133639,2D/NS_incom/,07a1edc16fb7d981155ad4173c42abf1
NS_Incom,ns_incom_inhom_2d_512-81.h5,133276,2D/NS_incom/,3a58395f316b2158ea61844eadd4109f
NS_Incom,ns_incom_inhom_2d_512-82.h5,133640,2D/NS_incom/,a0f4505418beb4da8b7f84a83efc3904
NS_Incom,ns_incom_inhom_2d_512-83.h5,133272,2D/NS_incom/,89993b4f3ac2653f6377941e640e2233
NS_Incom,ns_incom_inhom_2d_512-84.h5,133643,2D/NS_incom/,c5269398ec4edb0f5891d4efdb2fc89d
NS_Incom,ns_incom_inhom_2d_512-85.h5,133641,2D/NS_incom/,090862c29ecbc2c4232ddbacca3fb230
NS_Incom,ns_incom_inhom_2d_512-86.h5,133647,2D/NS_incom/,a712449bef87318a620d1663c4ffde27
NS_Incom,ns_incom_inhom_2d_512-87.h5,133644,2D/NS_incom/,920a3dcb3b216f0d9a4ab0b9b4c8745a
NS_Incom,ns_incom_inhom_2d_512-88.h5,133655,2D/NS_incom/,cc96b1e357f264f12dcfbb41736a53bf
NS_Incom,ns_incom_inhom_2d_512-89.h5,133646,2D/NS_incom/,7fd484851410b7139bfea4166074fe00
NS_Incom,ns_incom_inhom_2d_512-9.h5,136475,2D/NS_incom/,254bb44710b625f716b61d51d5d1e58e
NS_Incom,ns_incom_inhom_2d_512-90.h5,133652,2D/NS_incom/,c6c4e27d6ba19b4ccb5f27e67dd9cdf1
NS_Incom,ns_incom_inhom_2d_512-91.h5,136474,2D/NS_incom/,527b23b7e4ca4d18c5c036c41e15e4fe
NS_Incom,ns_incom_inhom_2d_512-92.h5,133648,2D/NS_incom/,84fd5f64db474f8e20b670d01929d57a
NS_Incom,ns_incom_inhom_2d_512-93.h5,133649,2D/NS_incom/,20583d7edf7da9a80f16a26c8388a65e
NS_Incom,ns_incom_inhom_2d_512-94.h5,133691,2D/NS_incom/,8540e7f1cc6a9e2bc64726a325ddacfb
NS_Incom,ns_incom_inhom_2d_512-95.h5,133690,2D/NS_incom/,25d4c08d5534d0f10c877220e258640c
NS_Incom,ns_incom_inhom_2d_512-96.h5,133270,2D/NS_incom/,93e772cbfd36d434e97a079d701d5382
NS_Incom,ns_incom_inhom_2d_512-97.h5,133653,2D/NS_incom/,ffa1d46e58f67aa1932fc4ffd2e7716a
NS_Incom,ns_incom_inhom_2d_512-98.h5,133687,2D/NS_incom/,c28112e1339cda43f67dce03536e3455
NS_Incom,ns_incom_inhom_2d_512-99.h5,133654,2D/NS_incom/,abfe923a224cb4515dd545d5858b2124
SWE,2D_rdb_NA_NA.h5,133021,2D/shallow-water/,75d838c47aa410694bdc912ea7f22282
3D_CFD,3D_CFD_Rand_M1.0_Eta1e-08_Zeta1e-08_periodic_Train.hdf5,164693,3D/Train/,45892a12d1066d54af74badae55c438e
3D_CFD,3D_CFD_Turb_M1.0_Eta1e-08_Zeta1e-08_periodic_Train.hdf5,164694,3D/Train/,4f0eacaec5ff000bbd9a31026ea207b8
3D_CFD,BlastWave.hdf5,133264,3D/Test/BlastWave/,f901a1ec75925c1d861ac99a825878f3
3D_CFD,Turb_M01.hdf5,133224,3D/Test/Turbulence/,b27495031f434d01762bb0b819ac71e2
3D_CFD,Turb_M05.hdf5,133225,3D/Test/Turbulence/,f9407dff1a75a1d14d93e7dd570af728
3D_CFD,Turb_M1.hdf5,135833,3D/Test/Turbulence/,3758f23f71684ac666e0b1e91da0a1c4
3D_CFD,Turb_M2.hdf5,133227,3D/Test/Turbulence/,12e528dc8ab800f69474600ec58b24d3
3D_CFD,Turb_M4.hdf5,133228,3D/Test/Turbulence/,8db384feba75903a8c5b21ebeba40083
"""


def _build() -> dict[str, PDEBenchFileInfo]:
    rows = [line.split(",") for line in _TABLE.strip().splitlines()]
    per_pde: dict[str, int] = {}
    for pde, *_ in rows:
        per_pde[pde.lower()] = per_pde.get(pde.lower(), 0) + 1
    table = {}
    for pde, filename, file_id, folder, md5 in rows:
        key = pde.lower()
        size = PDEBENCH_PDE_SIZES.get(key) if per_pde[key] == 1 else None
        table[filename] = PDEBenchFileInfo(
            key, filename, DARUS_DATAFILE + file_id, folder, md5, size
        )
    return table


PDEBENCH_FILES: dict[str, PDEBenchFileInfo] = _build()


def download_pdebench(
    name: str,
    root: str | os.PathLike,
    *,
    resume: bool = True,
    progress: bool = True,
) -> list[Path]:
    """Download PDEBench files into ``root/<folder>/<filename>``, verifying their MD5.

    Args:
        name: a file name from :data:`PDEBENCH_FILES` (``"2D_DarcyFlow_beta1.0_Train.hdf5"``)
            or a PDE name (``"darcy"``, ``"burgers"``, ``"1d_cfd"``...; case-insensitive) for
            all of its files. Mind the sizes (:data:`PDEBENCH_PDE_SIZES`): 2D CFD is 551 GB.
        root: the data folder (created if missing).
        resume, progress: as for :func:`datasets.download`.

    Returns:
        the downloaded (or already present and verified) files' paths, in table order.

    Raises:
        KeyError: ``name`` is neither a known file nor a PDE (the message lists the PDEs).
        datasets.download's errors (HTTP status, checksum mismatch) name the URL.
    """
    if name in PDEBENCH_FILES:
        infos = [PDEBENCH_FILES[name]]
    else:
        infos = [i for i in PDEBENCH_FILES.values() if i.pde == name.lower()]
        if not infos:
            pdes = sorted({i.pde for i in PDEBENCH_FILES.values()})
            raise KeyError(
                f"download_pdebench: {name!r} is neither a PDEBench file name nor a PDE; "
                f"PDEs: {pdes} (file names: datasets.pde.PDEBENCH_FILES)"
            )
    root = Path(root)
    return [
        download(i.url, root / i.folder / i.filename, md5=i.md5, resume=resume, progress=progress)
        for i in infos
    ]
